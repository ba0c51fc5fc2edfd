"""Runs one TCK scenario against kg's Cypher engine and classifies the outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from kg.cypher.context import Context, activate, deactivate
from kg.cypher.errors import CypherArgumentError, CypherError, CypherSyntaxError, CypherTypeError, UnsupportedCypher
from kg.cypher.executor import execute
from kg.cypher.lexer import tokenize
from kg.cypher.parser import parse_read_only
from kg.cypher.readonly import is_name_position

from . import values as V
from .gherkin import Scenario, Step
from .materialise import Materialiser, Unrepresentable

TCK = Path(__file__).resolve().parents[3] / "shared" / "tck"
FEATURES, GRAPHS = TCK / "features", TCK / "graphs"
TIMEOUT_S = 20.0
_WRITE_WORDS = {"CREATE", "MERGE", "SET", "DELETE", "REMOVE", "DETACH", "FOREACH", "LOAD", "DROP"}

# TCK error class -> the kg exception it must be (or a subclass of); any other class needs some CypherError.
ERROR_CLASSES: dict[str, type[CypherError]] = {
    "SyntaxError": CypherSyntaxError, "TypeError": CypherTypeError, "ArgumentError": CypherArgumentError,
}


@dataclass
class Outcome:
    """`status` is pass, fail or skip; `kind` names the failure cause (one of KINDS) or why it was skipped."""

    status: str
    kind: str = ""
    detail: str = ""


KINDS = (
    "wrong result",  # rows or columns differ from the expected ones
    "accepted invalid",  # an error was expected, the query ran
    "wrong error",  # an error of another class or phase than expected
    "unexpected error",  # a CypherError where rows were expected
    "unsupported",  # UnsupportedCypher where rows were expected
    "crash",  # a Python exception that is not a CypherError escaped
    "setup",  # the setup cannot be held in kg's graph model
)


def _is_write(query: str) -> bool:
    try:
        toks = tokenize(query)
    except Exception:  # noqa: BLE001 - unreadable text: fall back to words
        return bool(re.search(r"\b(" + "|".join(_WRITE_WORDS) + r")\b", query, re.I))
    for k, tok in enumerate(toks):
        if tok.upper in _WRITE_WORDS:
            prev = toks[k - 1] if k else None
            prev2 = toks[k - 2] if k > 1 else None
            if not is_name_position(prev, prev2, toks[k + 1]):
                return True
    return False


def skip_reason(sc: Scenario) -> str | None:
    """Why a scenario is outside the read-only suite (None: it is in)."""
    if "@ignore" in sc.tags:
        return "tagged @ignore in the TCK"
    for st in sc.steps:
        if st.keyword == "Then" and st.text.startswith("the side effects should be"):
            return "writes (side effects expected)"
        if st.keyword == "When" and st.doc is not None and _is_write(st.doc):
            return "writes (query with a write clause)"
        if st.keyword == "Given" and st.text.startswith("there exists a procedure"):
            # Registering a procedure changes the database; kg's engine has only its built-in db.* ones.
            return "declares a user-defined procedure"
    return None


def _table_params(step: Step) -> dict[str, Any]:
    return {row[0]: V.to_python(V.parse_value(row[1])) for row in step.table or []}


def _setup(sc: Scenario) -> tuple[nx.MultiDiGraph, dict[str, Any]]:
    mat = Materialiser()
    params: dict[str, Any] = {}
    for st in sc.steps:
        if st.keyword != "Given":
            continue
        text = st.text
        if text in ("an empty graph", "any graph"):
            continue
        m = re.fullmatch(r"the (\S+) graph", text)
        if m:
            mat.run((GRAPHS / m.group(1) / f"{m.group(1)}.cypher").read_text(encoding="utf-8"))
        elif text.startswith("having executed"):
            mat.run(st.doc or "")
        elif text.startswith("parameters are"):
            params.update(_table_params(st))
        else:
            raise ValueError(f"unknown step 'Given {text}'")
    return mat.graph, params


def run_query(graph: nx.MultiDiGraph, query: str, params: dict[str, Any]) -> tuple[str, Any]:
    """('rows', (columns, rows)) or ('error', (phase, exception)); phase is compile or runtime.

    Mirrors `kg.cypher.run_query` but keeps internal values (node identity and labels) and tells the
    phase: everything up to the first row (read-only guard, parse, static checks, planning of the clause
    pipeline) is compile time, producing rows is run time.
    """
    phase = "compile"
    ctx = Context(graph, params, TIMEOUT_S)
    token = activate(ctx)
    try:
        parsed = parse_read_only(query)
        columns, rows = execute(parsed, ctx)
        phase = "runtime"
        return "rows", (columns, [list(r) for r in rows])
    except RecursionError as exc:
        return "error", (phase, CypherError(f"recursion: {exc}"))
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        return "error", (phase, exc)
    finally:
        deactivate(token)


def _expect_rows(st: Step, graph: nx.MultiDiGraph, result: Any) -> Outcome:
    columns, rows = result
    text = st.text
    if text.startswith("the result should be empty"):
        if rows:
            return Outcome("fail", "wrong result", f"expected no rows, got {len(rows)}")
        return Outcome("pass")
    table = st.table or [[]]
    header, body = table[0], table[1:]
    if list(columns) != header:
        return Outcome("fail", "wrong result", f"columns {columns} != expected {header}")
    ignore_list_order = "ignoring element order for lists" in text
    in_order = text.startswith("the result should be, in order")

    def norm(c: V.Canon) -> V.Canon:
        return V.unordered(c) if ignore_list_order else c

    want = [tuple(norm(V.parse_value(cell)) for cell in row) for row in body]
    got = [tuple(norm(V.canon(v, graph)) for v in row) for row in rows]
    same = want == got if in_order else sorted(want, key=repr) == sorted(got, key=repr)
    if same:
        return Outcome("pass")
    shown = "; ".join(" | ".join(V.show(c) for c in row) for row in got[:6])
    return Outcome("fail", "wrong result", f"got {len(got)} row(s): {shown}{' …' if len(got) > 6 else ''}")


_ERROR_STEP = re.compile(r"an? (\w+) should be raised at (compile time|runtime|any time)(?:: *(\S*))?")


def _expect_error(st: Step, kind: str, result: Any) -> Outcome:
    m = _ERROR_STEP.match(st.text)
    assert m is not None
    cls, when, code = m.group(1), m.group(2), m.group(3) or ""
    if kind == "rows":
        return Outcome("fail", "accepted invalid", f"expected {cls} ({code}) at {when}, query ran")
    phase, exc = result
    if not isinstance(exc, CypherError):
        return Outcome("fail", "crash", f"{type(exc).__name__}: {exc}")
    want = ERROR_CLASSES.get(cls, CypherError)
    where = {"compile time": "compile", "runtime": "runtime"}.get(when)
    if not isinstance(exc, want) or isinstance(exc, UnsupportedCypher):
        return Outcome("fail", "wrong error", f"expected {cls} ({code}), got {type(exc).__name__}: {exc}")
    if where is not None and phase != where:
        return Outcome("fail", "wrong error", f"expected {cls} ({code}) at {when}, raised at {phase}: {exc}")
    return Outcome("pass")


def run_scenario(sc: Scenario) -> Outcome:
    """Materialise the setup, run the query and compare with the scenario's expectation."""
    reason = skip_reason(sc)
    if reason:
        return Outcome("skip", reason)
    try:
        graph, params = _setup(sc)
    except Unrepresentable as exc:
        return Outcome("fail", "setup", str(exc))
    except Exception as exc:  # noqa: BLE001 - a setup kg's read clauses cannot evaluate
        return Outcome("fail", "setup", f"setup query failed: {type(exc).__name__}: {exc}")
    query = next(st.doc for st in sc.steps if st.keyword == "When")
    for st in sc.steps:
        if st.keyword == "Given" and st.text.startswith("parameters are"):
            params.update(_table_params(st))
    kind, result = run_query(graph, query or "", params)
    then = next(st for st in sc.steps if st.keyword == "Then")
    if "should be raised" in then.text:
        return _expect_error(then, kind, result)
    if kind == "error":
        phase, exc = result
        if isinstance(exc, UnsupportedCypher):
            return Outcome("fail", "unsupported", str(exc))
        if isinstance(exc, CypherError):
            return Outcome("fail", "unexpected error", f"{type(exc).__name__} at {phase}: {exc}")
        return Outcome("fail", "crash", f"{type(exc).__name__}: {exc}")
    return _expect_rows(then, graph, result)
