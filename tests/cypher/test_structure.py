"""Structure of the kg.cypher package: no import cycle among its modules (imports inside functions count), no
private name of one module used by another, and one tokenization per query."""

from __future__ import annotations

import ast
import sys
import uuid
from pathlib import Path

import networkx as nx
import pytest

import kg.cypher
from kg.cypher import CypherSyntaxError, CypherWriteError, lexer, run_query

PACKAGE = "kg.cypher"
SOURCES = Path(kg.cypher.__file__).parent
MODULES = {p.stem for p in SOURCES.glob("*.py")}
# NetworkX's adjacency dicts, read directly on hot paths (the public views cost a call per access).
GRAPH_INTERNALS = {"_node", "_succ", "_pred", "_adj"}


def _trees() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in sorted(SOURCES.glob("*.py"))}


def _imports(module: str, tree: ast.Module) -> list[tuple[str, str | None, ast.AST]]:
    """(imported kg.cypher module, imported name or None, node) for every import anywhere in ``tree``. A name
    imported from the package that is not a submodule comes from ``__init__``."""
    out: list[tuple[str, str | None, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[2], None, node) for a in node.names if a.name.startswith(PACKAGE + ".")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x, from .x import y
                base = PACKAGE if node.level == 1 else None
                source = f"{PACKAGE}.{node.module}" if base and node.module else base
            else:
                source = node.module
            if source == PACKAGE:
                for a in node.names:
                    out.append((a.name, None, node) if a.name in MODULES else ("__init__", a.name, node))
            elif source and source.startswith(PACKAGE + "."):
                out += [(source.split(".")[2], a.name, node) for a in node.names]
    return out


def _graph() -> nx.DiGraph:
    g = nx.DiGraph()
    for module, tree in _trees().items():
        g.add_node(module)
        g.add_edges_from((module, target) for target, _, _ in _imports(module, tree) if target != module)
    return g


def test_the_module_graph_is_complete() -> None:
    """The import map sees the imports everyone knows of (guards the checks below against a blind parser)."""
    g = _graph()
    assert g.has_edge("executor", "evaluator") and g.has_edge("parser_base", "lexer")
    assert g.has_edge("vector", "matcher") and g.has_edge("evaluator", "ast")  # `from kg.cypher import ast as A`
    assert set(g) == MODULES


def test_no_import_cycle_among_modules() -> None:
    cycles = sorted(" -> ".join([*c, c[0]]) for c in nx.simple_cycles(_graph()))
    assert cycles == [], "import cycles in kg.cypher:\n" + "\n".join(cycles)


def test_modules_import_each_other_only_at_module_level() -> None:
    """An import inside a function hides a dependency (and was how cycles were closed)."""
    nested = []
    for module, tree in _trees().items():
        top = {id(n) for n in tree.body}
        nested += [f"{module}.py:{node.lineno} imports {target}" for target, _, node in _imports(module, tree)
                   if id(node) not in top]
    assert nested == []


def test_no_private_name_is_imported_across_modules() -> None:
    found = []
    for module, tree in _trees().items():
        aliases: dict[str, str] = {}  # local name -> kg.cypher module it stands for
        for target, name, node in _imports(module, tree):
            if name is not None and name.startswith("_") and not name.startswith("__"):
                found.append(f"{module}.py:{node.lineno} imports {target}.{name}")
            if name is None and isinstance(node, ast.ImportFrom):
                aliases.update({a.asname or a.name: a.name for a in node.names if a.name == target})
            if isinstance(node, ast.Import):
                aliases.update({a.asname: a.name.split(".")[2] for a in node.names if a.asname})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{module}.py:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert found == []


def test_no_private_attribute_of_another_object_is_used() -> None:
    """``obj._x`` only on ``self``/``cls`` (and NetworkX's adjacency dicts): state one module keeps on another's
    objects is declared there under a public name."""
    found = []
    for module, tree in _trees().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            if node.attr in GRAPH_INTERNALS or (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                continue
            found.append(f"{module}.py:{node.lineno} {ast.unparse(node)}")
    assert found == []


@pytest.fixture
def tokenized(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `kg.cypher.lexer.tokenize` is called with, wherever in kg.cypher it is called from."""
    calls: list[str] = []
    real = lexer.tokenize

    def counting(text: str) -> list[lexer.Token]:
        calls.append(text)
        return real(text)

    for name, mod in list(sys.modules.items()):
        if (name == PACKAGE or name.startswith(PACKAGE + ".")) and getattr(mod, "tokenize", None) is real:
            monkeypatch.setattr(mod, "tokenize", counting)
    return calls


def _graph_with_a_paper() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    g.add_node("p1", label="Paper", id="p1", title="BERT")
    return g


def _fresh(text: str) -> str:
    """``text`` with a comment no other test's query has, so the engine's parse cache cannot answer it."""
    return f"{text} // {uuid.uuid4().hex}"


def test_a_query_is_tokenized_once(tokenized: list[str]) -> None:
    """The read-only guard and the parser share one token list."""
    query = _fresh("MATCH (p:Paper) WHERE p.title STARTS WITH 'B' AND EXISTS { MATCH (p)--() } RETURN p.id")
    assert run_query(_graph_with_a_paper(), query).rows == []
    assert tokenized == [query]


def test_a_long_query_is_tokenized_once(tokenized: list[str]) -> None:
    """Past the parse cache's size limit too."""
    query = _fresh("MATCH (p:Paper) WHERE p.id IN [" + ", ".join(f"'x{i}'" for i in range(1000)) + "] RETURN p")
    assert len(query) > 4096
    assert run_query(_graph_with_a_paper(), query).rows == []
    assert tokenized == [query]


def test_a_refused_query_is_tokenized_once(tokenized: list[str]) -> None:
    """The guard still runs first: a write is named even when the parser would fail on the text."""
    query = _fresh("MATCH (p) SET p.x = 1 RETURN p ((")
    with pytest.raises(CypherWriteError, match="SET is not allowed: queries are read-only"):
        run_query(_graph_with_a_paper(), query)
    assert tokenized == [query]
    with pytest.raises(CypherSyntaxError):
        run_query(_graph_with_a_paper(), _fresh("MATCH (p RETURN p"))
    assert len(tokenized) == 2
