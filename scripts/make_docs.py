"""`make docs`: write the README's example outputs from a fresh build of seeds/, and docs/overview.png.

Every block between ``<!-- docs:NAME -->`` and ``<!-- /docs:NAME -->`` in README.md is generated here:

- ``build``, ``stats``: ``kg build seeds/`` and ``kg stats`` as they print now (a fresh store in a temporary folder);
- ``api``: the HTTP calls, answered by the real app (in-process), long lists and strings cut with …;
- ``related``, ``search``: ``kg paper ID -k 3``'s related papers with their reasons, and ``kg search``;
- ``query1`` ... ``query5``: the answer of the ```cypher block just above each marker, as ``kg cypher`` prints it;
- ``eval``, ``scale``: recorded outputs, too slow to recompute each time: ``docs/results/eval.txt`` (what
  ``kg eval`` printed; ``--eval`` runs it again and records it) and ``docs/results/scale.txt`` (what
  ``python bench/run.py --n 0 --jobs 2`` printed), ``store-size``: ``docs/results/store-size.txt`` (what
  ``python bench/store_size.py`` printed for the 83k store before and after ``kg upgrade``), ``related-bench``:
  ``docs/results/related.txt`` (what ``python bench/related.py`` printed), ``resolution-bench``:
  ``docs/results/resolution.txt`` (what ``python bench/resolution.py`` printed);
- ``entity``: ``kg entity MLLM``, the forms a node holds and why.

tests/core/test_readme.py renders the same blocks and fails when the README differs (timings excepted), so the
README cannot go stale: after a change that alters an output, run ``make docs`` and commit what it wrote.

    python scripts/make_docs.py            # README blocks and docs/overview.png
    python scripts/make_docs.py --check    # exit 1, naming the stale blocks, instead of writing
    python scripts/make_docs.py --eval     # also re-run kg eval (minutes) and record it
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results"
RECORDED = {"eval": RESULTS / "eval.txt", "scale": RESULTS / "scale.txt", "store-size": RESULTS / "store-size.txt",
            "related-bench": RESULTS / "related.txt", "resolution-bench": RESULTS / "resolution.txt"}
BLOCK = re.compile(r"(<!-- docs:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- /docs:(?P=name) -->)", re.S)
WIDTH = 116
# Machine-dependent figures, the same on both sides before comparing: seconds in the build summary.
TIMING = re.compile(r"\bin \d+(?:\.\d+)? s\b")
API_CALLS = [  # (what the README shows, method, path, body)
    ("curl -s 'localhost:8000/papers/{related_id}/related?k=2'", "GET", "/papers/{related_id}/related?k=2", None),
    ("curl -s 'localhost:8000/entities/STE?paper_limit=1'", "GET", "/entities/STE?paper_limit=1", None),
    ("curl -s 'localhost:8000/search?q=MI&limit=2'", "GET", "/search?q=MI&limit=2", None),
    ("curl -s -X POST localhost:8000/cypher -H 'content-type: application/json' -d "
     "'{\"query\":\"MATCH (n) DETACH DELETE n\"}'", "POST", "/cypher", {"query": "MATCH (n) DETACH DELETE n"}),
]
RELATED_TITLE = "Multimodal federated learning"  # the paper whose related papers the README shows
SEARCH_QUERY = "how much a network memorises of its training data"  # `kg search`: words other than the abstracts'
ENTITY_REF = "MLLM"  # `kg entity`: a node whose forms joined for several reasons
PAPER_RELATED_TITLE = "Training neural networks with quantized parameters"  # `kg paper`: its related papers


def normalise(text: str) -> str:
    """What the staleness test compares: timings as ``in N s``, trailing spaces gone."""
    return "\n".join(line.rstrip() for line in TIMING.sub("in N s", text).strip().splitlines())


def fenced(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def kg(*args: str, cwd: Path = ROOT) -> str:
    """Run the real ``kg`` command and return what it printed on stdout (stderr passes through)."""
    env = {**os.environ, "COLUMNS": "120"}
    r = subprocess.run([sys.executable, "-m", "kg", *args], cwd=cwd, capture_output=True, text=True, env=env,
                       timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"make_docs: kg {' '.join(args)} failed:\n{r.stderr}")
    return r.stdout


@contextmanager
def seeds_store() -> Iterator[tuple[Path, str]]:
    """A fresh store built from seeds/ in a temporary folder, and what ``kg build`` printed."""
    tmp = Path(tempfile.mkdtemp(prefix="kg-docs-"))
    try:
        # Relative paths, as a user types them; the store is named kg-store like the default.
        (tmp / "seeds").symlink_to(ROOT / "seeds")
        out = kg("build", "seeds/", "--no-progress", "--store-dir", "kg-store", cwd=tmp)
        yield tmp / "kg-store", out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cut(obj: Any, *, items: int = 2, chars: int = 110) -> Any:
    """``obj`` with lists past ``items`` and strings past ``chars`` cut, each cut marked with …."""
    if isinstance(obj, list):
        return [cut(v, items=items, chars=chars) for v in obj[:items]] + (["…"] if len(obj) > items else [])
    if isinstance(obj, dict):
        return {k: cut(v, items=items, chars=chars) for k, v in obj.items()}
    if isinstance(obj, str) and len(obj) > chars:
        return obj[: chars - 1].rsplit(" ", 1)[0] + " …"
    return obj


def wrap_json(obj: Any) -> str:
    """Compact JSON in lines of at most WIDTH characters, broken only after a comma between values."""
    text = orjson.dumps(obj).decode()
    pieces, start, in_str, esc = [], 0, False, False
    for i, c in enumerate(text):
        if in_str:
            esc, in_str = (not esc and c == "\\"), in_str and (esc or c != '"')
        elif c == '"':
            in_str = True
        elif c == ",":
            pieces.append(text[start : i + 1])
            start = i + 1
    pieces.append(text[start:])
    lines, line = [], ""
    for piece in pieces:
        if line and len(line) + len(piece) > WIDTH:
            lines.append(line)
            line = " "
        line += piece
    return "\n".join([*lines, line])


def api_block(store_dir: Path) -> str:
    from fastapi.testclient import TestClient

    from api.main import create_app
    from api.settings import Settings
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(store_dir)
    related_id = next(p.id for p in store.list_papers(limit=1000).items if p.title.startswith(RELATED_TITLE))
    out = []
    with TestClient(create_app(Settings(store_dir=str(store_dir)), store=store)) as client:
        for shown, method, path, body in API_CALLS:
            r = client.request(method, path.format(related_id=related_id), json=body)
            out.append("$ " + shown.replace("{related_id}", related_id))
            out.append(wrap_json(cut(r.json())))
            out.append("")
    return fenced("\n".join(out))


def related_block(store_dir: Path) -> str:
    """``kg paper ID -k 3``'s related papers (the paper's own entities left out: the README shows them elsewhere)."""
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(store_dir)
    pid = next(p.id for p in store.list_papers(limit=1000).items if p.title.startswith(PAPER_RELATED_TITLE))
    out = kg("paper", pid, "-k", "3", "--store-dir", str(store_dir))
    return f"$ kg paper {pid} -k 3\n…\n" + out[out.index("RELATED"):]


def readme_queries(readme: str) -> dict[str, str]:
    """Each ``queryN`` marker's query: the ```cypher block right above it, on one line."""
    out = {}
    for m in BLOCK.finditer(readme):
        if m.group("name").startswith("query"):
            above = readme[: m.start()].rsplit("```cypher\n", 1)[1].split("```", 1)[0]
            out[m.group("name")] = " ".join(above.split())
    return out


def query_blocks(readme: str, store_dir: Path) -> dict[str, str]:
    """Each ``queryN`` marker's answer: the ```cypher block right above it, run with ``kg cypher``."""
    return {name: fenced(kg("cypher", query, "--store-dir", str(store_dir)))
            for name, query in readme_queries(readme).items()}


def run_eval() -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    RECORDED["eval"].write_text("$ kg eval\n" + kg("eval").strip() + "\n", encoding="utf-8")


def render(readme: str, *, png: bool = False) -> dict[str, str]:
    """Every generated block by name, from a fresh build of seeds/ and the recorded files."""
    blocks = {name: fenced(path.read_text(encoding="utf-8")) for name, path in RECORDED.items() if path.exists()}
    with seeds_store() as (store_dir, build_out):
        blocks["build"] = fenced("$ kg build seeds/\n" + build_out)
        blocks["stats"] = fenced("$ kg stats\n" + kg("stats", "--store-dir", str(store_dir)))
        blocks["api"] = api_block(store_dir)
        blocks["related"] = fenced(related_block(store_dir))
        blocks["entity"] = fenced(f"$ kg entity {ENTITY_REF} --limit 1\n"
                                  + kg("entity", ENTITY_REF, "--limit", "1", "--store-dir", str(store_dir)))
        blocks["search"] = fenced(f"$ kg search '{SEARCH_QUERY}' --limit 3\n"
                                  + kg("search", SEARCH_QUERY, "--limit", "3", "--store-dir", str(store_dir)))
        blocks |= query_blocks(readme, store_dir)
        if png:
            overview_png(store_dir)
    return blocks


def stale(readme: str, blocks: dict[str, str]) -> list[str]:
    """Names of README blocks that differ from ``blocks`` (after normalise), or that nothing generates."""
    bad = []
    for m in BLOCK.finditer(readme):
        want = blocks.get(m.group("name"))
        if want is None or normalise(m.group("body")) != normalise(want):
            bad.append(m.group("name"))
    return bad


def rewrite(readme: str, blocks: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        return m.group(1) + blocks.get(m.group("name"), m.group("body")) + m.group(4)

    return BLOCK.sub(sub, readme)


def overview_png(store_dir: Path) -> None:
    """docs/overview.png: the offline overview page (`kg viz`) in headless Chromium, after its layout settled."""
    exe = os.environ.get("KG_CHROMIUM") or next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))), None)
    if exe is None:
        print("make_docs: no chromium found; docs/overview.png left as it is", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory(prefix="kg-docs-png-") as tmp:
        html = Path(tmp) / "overview.html"
        kg("viz", "--store-dir", str(store_dir), "-o", str(html))
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={tmp}/profile", "--window-size=1400,900", "--virtual-time-budget=20000",
                        f"--screenshot={ROOT / 'docs' / 'overview.png'}", html.as_uri()],
                       check=True, capture_output=True, timeout=180)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="Only say which blocks are stale; exit 1 if any.")
    ap.add_argument("--eval", action="store_true", help="Run kg eval again (minutes) and record its output.")
    ap.add_argument("--no-png", action="store_true", help="Leave docs/overview.png alone.")
    args = ap.parse_args()
    if args.eval:
        run_eval()
    readme = README.read_text(encoding="utf-8")
    blocks = render(readme, png=not (args.check or args.no_png))
    if args.check:
        bad = stale(readme, blocks)
        print("README is up to date" if not bad else "stale README blocks: " + ", ".join(bad))
        return 1 if bad else 0
    README.write_text(rewrite(readme, blocks), encoding="utf-8")
    print(f"make_docs: wrote {len(blocks)} blocks into README.md" + ("" if args.no_png else " and docs/overview.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
