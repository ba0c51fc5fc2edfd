"""The README's example outputs are what the code prints now: `make docs` writes them, this test re-renders them."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_docs"] = module
    spec.loader.exec_module(module)
    return module


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


@pytest.mark.slow
def test_readme_examples_match_what_the_code_prints_now() -> None:
    md = make_docs()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = [m.group("name") for m in md.BLOCK.finditer(readme)]
    assert {"build", "stats", "api", "query1", "query5", "eval", "scale"} <= set(names)
    blocks = md.render(readme, png=False)
    bad = md.stale(readme, blocks)
    assert not bad, f"README blocks {bad} differ from what the code prints now: run `make docs` and commit"
