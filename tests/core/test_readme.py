"""The example outputs of README.md and docs/*.md are what the code prints now: `make docs` writes them, this test
re-renders them. The README stays short, and its links and the docs' links point somewhere."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 300
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.S | re.M)
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)\s]+)\)")
MARKER_LINE = re.compile(r"^<!-- (/?)docs:([\w-]+) -->$", re.M)


def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_docs"] = module
    spec.loader.exec_module(module)
    return module


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    prose = FENCE.sub("", text)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", prose, re.M)}


def test_normalise_ignores_timings_and_trailing_spaces_only() -> None:
    md = make_docs()
    assert md.normalise("store kg-store: 57 papers in 3.5 s  \n") == md.normalise("store kg-store: 57 papers in 12 s")
    assert md.normalise("57 papers, 651 entities") != md.normalise("57 papers, 627 entities")


def test_a_changed_block_is_reported_and_rewritten() -> None:
    md = make_docs()
    readme = ("intro\n<!-- docs:stats -->\n```text\nold\n```\n<!-- /docs:stats -->\n"
              "<!-- docs:gone -->\nx\n<!-- /docs:gone -->\n")
    blocks = {"stats": "```text\nnew\n```"}
    assert md.stale(readme, blocks) == ["stats", "gone"]
    assert md.stale(md.rewrite(readme, blocks), blocks) == ["gone"]
    timed = "<!-- docs:build -->\nstore: 57 papers in 3.5 s\n<!-- /docs:build -->\n"
    assert md.rewrite(timed, {"build": "store: 57 papers in 9.1 s"}) == timed  # no churn from timings alone


def test_one_block_is_written_in_every_file_that_has_its_marker() -> None:
    md = make_docs()
    docs = {"README.md": "a\n<!-- docs:stats -->\nold\n<!-- /docs:stats -->\n",
            "docs/x.md": "b\n<!-- docs:stats -->\nolder\n<!-- /docs:stats -->\n"
                         "<!-- docs:build -->\n\n<!-- /docs:build -->\n"}
    blocks = {"stats": "```text\nnew\n```", "build": "```text\nb\n```"}
    assert md.block_names(docs) == ["stats", "build"]
    assert md.stale_docs(docs, blocks) == ["README.md: stats", "docs/x.md: stats", "docs/x.md: build"]
    assert md.stale_docs({path: md.rewrite(text, blocks) for path, text in docs.items()}, blocks) == []


def test_queries_are_read_from_any_file_and_one_name_means_one_query() -> None:
    md = make_docs()
    q = "```cypher\nMATCH (n)\nRETURN n\n```\n\n<!-- docs:query1 -->\n```text\n```\n<!-- /docs:query1 -->\n"
    assert md.doc_queries({"README.md": "intro\n", "docs/a.md": q}) == {"query1": "MATCH (n) RETURN n"}
    assert md.doc_queries({"docs/a.md": q, "docs/b.md": q}) == {"query1": "MATCH (n) RETURN n"}
    with pytest.raises(SystemExit, match="query1"):
        md.doc_queries({"docs/a.md": q, "docs/b.md": q.replace("RETURN n", "RETURN count(n)")})


def test_a_shown_command_keeps_its_quotes_and_parameters() -> None:
    md = make_docs()
    assert md.shell_join(["stats"]) == "stats"
    assert md.shell_join(["search", "a b", "--limit", "3"]) == "search 'a b' --limit 3"
    assert md.shell_join(["cypher", "MATCH (e {id: $id}) RETURN e", "--param", "id=x"]) == \
        "cypher 'MATCH (e {id: $id}) RETURN e' --param id=x"
    assert md.shell_join(["cypher", "RETURN date('2025-06-01')"]) == "cypher \"RETURN date('2025-06-01')\""


def test_the_readme_is_short() -> None:
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; move detail into docs/*.md (at most {README_MAX_LINES})"


def test_every_marker_is_closed_and_has_a_renderer() -> None:
    md = make_docs()
    docs = md.read_docs()
    assert "README.md" in docs and len(docs) > 1
    for path, text in docs.items():
        opened = [m.group(2) for m in MARKER_LINE.finditer(text) if not m.group(1)]
        closed = [m.group(2) for m in MARKER_LINE.finditer(text) if m.group(1)]
        found = [m.group("name") for m in md.BLOCK.finditer(text)]
        assert opened == closed == found, f"{path}: a docs marker without its end (or the other way round)"
        assert not [n for n in found if not md.renderable(n)], f"{path}: blocks that make_docs does not render"


def test_every_shown_output_is_generated() -> None:
    """A fenced block showing a command and what it printed (``$ ...``) sits in a docs marker, so it cannot go stale."""
    md = make_docs()
    for path, text in md.read_docs().items():
        outside = md.BLOCK.sub("", text)
        shown = [body.splitlines()[0] for _, body in FENCE.findall(outside) if body.startswith("$ ")]
        assert not shown, f"{path}: output not written by make docs (put it under a docs marker): {shown}"


def test_links_between_the_readme_and_the_docs_point_somewhere() -> None:
    md = make_docs()
    docs = md.read_docs()
    bad = []
    for path, text in docs.items():
        here = (ROOT / path).parent
        for target in LINK.findall(FENCE.sub("", text)):
            file, _, anchor = target.partition("#")
            dest = (here / file).resolve() if file else ROOT / path
            if not dest.exists():
                bad.append(f"{path}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
                bad.append(f"{path}: {target} (no such heading)")
    assert not bad, bad
    linked = {m for m in LINK.findall(docs["README.md"])}
    unlinked = [p for p in docs if p.startswith("docs/") and not any(t.split("#")[0] == p for t in linked)]
    assert not unlinked, f"docs pages the README does not link to: {unlinked}"


@pytest.mark.slow
def test_examples_match_what_the_code_prints_now() -> None:
    md = make_docs()
    docs = md.read_docs()
    names = md.block_names(docs)
    assert {"build", "stats", "api", "api-related", "cypher", "cypher-cli", "trends", "landscape", "examples-build",
            "query1", "query5", "eval", "scale"} <= set(names)
    blocks = md.render(docs, png=False)
    bad = md.stale_docs(docs, blocks)
    assert not bad, f"blocks {bad} differ from what the code prints now: run `make docs` and commit"
