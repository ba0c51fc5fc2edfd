"""`make docs`: write the example outputs in README.md and docs/*.md from a fresh build of seeds/, and overview.png.

Every block between ``<!-- docs:NAME -->`` and ``<!-- /docs:NAME -->`` in README.md or any docs/*.md is generated
here. A name is rendered once and written wherever its marker is, in any of those files:

- ``build``: ``kg build seeds/`` as it prints now (a fresh store in a temporary folder); ``examples-build``:
  ``kg build examples/`` (warnings and summary) into another temporary store;
- ``stats``, ``entity``, ``search``, ``trends``, ``landscape``, ``cypher``, ``cypher-cli``: the ``kg`` commands of
  ``COMMANDS``, each shown as ``$ kg ...`` with what it printed, run on the fresh seeds store;
- ``api``, ``api-related``: the HTTP calls of ``API_BLOCKS``, answered by the real app (in-process), long lists and
  strings cut with …;
- ``related``: ``kg paper ID -k 3``'s related papers with their reasons;
- ``leaderboard``, ``api-leaderboard``: ``kg leaderboard NAME --limit 3`` and ``GET /leaderboards/NAME?limit=2`` on
  the seeds dataset with the most reported scores (``leaderboard_dataset``);
- ``query1`` ... ``query5`` (any name starting with ``query``): the answer of the ```cypher block just above the
  marker, as ``kg cypher`` prints it (one name, one query: the same name under two different queries is an error);
- ``eval``, ``scale``: recorded outputs, too slow to recompute each time: ``docs/results/eval.txt`` (what
  ``kg eval`` printed; ``--eval`` runs it again and records it) and ``docs/results/scale.txt`` (what
  ``python bench/run.py --n 0 --jobs 2`` printed), ``store-size``: ``docs/results/store-size.txt`` (what
  ``python bench/store_size.py`` printed for the 83k store before and after ``kg upgrade``), ``related-bench``:
  ``docs/results/related.txt`` (what ``python bench/related.py`` printed), ``resolution-bench``:
  ``docs/results/resolution.txt`` (what ``python bench/resolution.py`` printed).

tests/core/test_readme.py renders the same blocks and fails when a file differs (timings excepted), so the docs
cannot go stale: after a change that alters an output, run ``make docs`` and commit what it wrote. An example that
shows a command's output (a fenced block starting with ``$ ``) outside a marker fails that test too.

    python scripts/make_docs.py            # the blocks of README.md and docs/*.md, and docs/overview.png
    python scripts/make_docs.py --check    # exit 1, naming the stale blocks, instead of writing
    python scripts/make_docs.py --eval     # also re-run kg eval (minutes) and record it
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's api/ and viz/, never a tests/ folder of the same name (pytest)
    sys.path.insert(0, str(ROOT))
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"
RECORDED = {"eval": RESULTS / "eval.txt", "scale": RESULTS / "scale.txt", "store-size": RESULTS / "store-size.txt",
            "related-bench": RESULTS / "related.txt", "resolution-bench": RESULTS / "resolution.txt"}
BLOCK = re.compile(r"(<!-- docs:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- /docs:(?P=name) -->)", re.S)
OPENING = re.compile(r"<!-- docs:(?P<name>[\w-]+) -->")
WIDTH = 116
# Machine-dependent figures, the same on both sides before comparing: seconds in the build summary.
TIMING = re.compile(r"\bin \d+(?:\.\d+)? s\b")
RELATED_TITLE = "Multimodal federated learning"  # the paper whose related papers the API example shows
SEARCH_QUERY = "how much a network memorises of its training data"  # `kg search`: words other than the abstracts'
ENTITY_REF = "MLLM"  # `kg entity`: a node whose forms joined for several reasons
PAPER_RELATED_TITLE = "Training neural networks with quantized parameters"  # `kg paper`: its related papers
_RELATED_CALL = ("curl -s 'localhost:8000/papers/{related_id}/related?k=2'", "GET", "/papers/{related_id}/related?k=2",
                 None)
_REASONS_CALL = ("curl -s 'localhost:8000/papers/{reasons_id}/related?k=2'", "GET", "/papers/{reasons_id}/related?k=2",
                 None)  # related papers with shared entities among the reasons
_SEARCH_CALL = ("curl -s 'localhost:8000/search?q=MI&limit=2'", "GET", "/search?q=MI&limit=2", None)
API_BLOCKS = {  # block: the calls it shows, each (what the docs show, method, path, body)
    "api": [
        _RELATED_CALL,
        ("curl -s 'localhost:8000/entities/STE?paper_limit=1'", "GET", "/entities/STE?paper_limit=1", None),
        _SEARCH_CALL,
        ("curl -s -X POST localhost:8000/cypher -H 'content-type: application/json' -d "
         "'{\"query\":\"MATCH (n) DETACH DELETE n\"}'", "POST", "/cypher", {"query": "MATCH (n) DETACH DELETE n"}),
    ],
    "api-related": [_REASONS_CALL, _SEARCH_CALL],
    "api-leaderboard": [("curl -s 'localhost:8000/leaderboards/{board}?limit=2'", "GET",
                         "/leaderboards/{board}?limit=2", None)],
}
# block: the kg commands it shows, each run on the fresh seeds store. Arguments are chosen so that every answer
# over the seeds has rows: an example that prints "(none)" teaches nothing.
COMMANDS: dict[str, list[list[str]]] = {
    "stats": [["stats"]],
    "entity": [["entity", ENTITY_REF, "--limit", "1"]],
    "search": [["search", SEARCH_QUERY, "--limit", "3"]],
    "trends": [["trends", "--min-count", "2", "--limit", "3"]],
    "landscape": [["landscape", "CIFAR-10", "--limit", "4"]],
    "cypher": [["cypher", "MATCH (p:Paper)-->(e) WHERE NOT e:Paper AND NOT e:Venue\n"
                          "           RETURN e.name AS entity, labels(e)[0] AS type, count(DISTINCT p) AS papers\n"
                          "           ORDER BY papers DESC, entity LIMIT 5"]],
    "cypher-cli": [
        ["cypher", "MATCH (p:Paper)-[:EVALUATES_ON]->(d:Dataset) RETURN d.name AS dataset, count(*) AS papers\n"
                   "           ORDER BY papers DESC, dataset LIMIT 5"],
        ["cypher", "MATCH (e {id: $id})<-[r]-(p:Paper) RETURN type(r) AS edge, p.title AS paper",
         "--param", "id=straight-through-estimator"],
        ["cypher", "MATCH (p:Paper) WHERE p.year >= $year RETURN p.venue AS venue, count(p) AS papers",
         "--param", "year=2026"],
    ],
}


def doc_paths() -> list[Path]:
    """The files whose blocks are generated: README.md and every docs/*.md."""
    return [README, *sorted(DOCS.glob("*.md"))]


def read_docs(paths: list[Path] | None = None) -> dict[str, str]:
    """Each generated file's text, by its path from the repository's root (``README.md``, ``docs/cypher.md``)."""
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths or doc_paths()}


def block_names(docs: Mapping[str, str]) -> list[str]:
    """Every block name in ``docs``, once each, in file and then text order."""
    return list(dict.fromkeys(m.group("name") for text in docs.values() for m in BLOCK.finditer(text)))


def renderable(name: str) -> bool:
    """Whether ``render`` makes a block of this name."""
    return (name in RECORDED or name in COMMANDS or name in API_BLOCKS or name.startswith("query")
            or name in ("build", "examples-build", "related", "leaderboard"))


def normalise(text: str) -> str:
    """What the staleness test compares: timings as ``in N s``, trailing spaces gone."""
    return "\n".join(line.rstrip() for line in TIMING.sub("in N s", text).strip().splitlines())


def fenced(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def shell_join(args: list[str]) -> str:
    """``args`` as a user types them: single quotes where needed (queries keep their ``$parameters``)."""
    def quote(a: str) -> str:
        if shlex.quote(a) == a:
            return a
        return f"'{a}'" if "'" not in a else f'"{a}"' if not re.search(r'["$`\\]', a) else shlex.quote(a)

    return " ".join(quote(a) for a in args)


def kg_run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run the real ``kg`` command; a failure stops make_docs with what it printed."""
    env = {**os.environ, "COLUMNS": "120"}
    r = subprocess.run([sys.executable, "-m", "kg", *args], cwd=cwd, capture_output=True, text=True, env=env,
                       timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"make_docs: kg {' '.join(args)} failed:\n{r.stderr}")
    return r


def kg(*args: str, cwd: Path = ROOT) -> str:
    """What the real ``kg`` command printed on stdout."""
    return kg_run(*args, cwd=cwd).stdout


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


def examples_block() -> str:
    """``kg build examples/`` into a fresh store: the skipped records' warnings (stderr), then the summary."""
    with tempfile.TemporaryDirectory(prefix="kg-docs-examples-") as tmp:
        (Path(tmp) / "examples").symlink_to(ROOT / "examples")
        r = kg_run("build", "examples/", "--no-progress", "--store-dir", "examples-store", cwd=Path(tmp))
    return fenced("$ kg build examples/ --store-dir examples-store\n" + r.stderr + r.stdout)


def command_block(commands: list[list[str]], store_dir: Path) -> str:
    """Each command as ``$ kg ...`` and what it printed on the store, a blank line between them."""
    shown = [f"$ kg {shell_join(args)}\n" + kg(*args, "--store-dir", str(store_dir)).rstrip() for args in commands]
    return fenced("\n\n".join(shown))


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


def api_blocks(store_dir: Path) -> dict[str, str]:
    from fastapi.testclient import TestClient

    from api.main import create_app
    from api.settings import Settings
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(store_dir)
    papers = store.list_papers(limit=1000).items
    ids = {"related_id": next(p.id for p in papers if p.title.startswith(RELATED_TITLE)),
           "reasons_id": next(p.id for p in papers if p.title.startswith(PAPER_RELATED_TITLE)),
           "board": quote(leaderboard_dataset(store_dir), safe="")}
    blocks = {}
    with TestClient(create_app(Settings(store_dir=str(store_dir)), store=store)) as client:
        for name, calls in API_BLOCKS.items():
            out = []
            for shown, method, path, body in calls:
                r = client.request(method, path.format(**ids), json=body)
                for key, pid in ids.items():  # not str.format: the shown JSON bodies have braces of their own
                    shown = shown.replace("{" + key + "}", pid)
                out.append("$ " + shown)
                out.append(wrap_json(cut(r.json())))
                out.append("")
            blocks[name] = fenced("\n".join(out))
    return blocks


def related_block(store_dir: Path) -> str:
    """``kg paper ID -k 3``'s related papers (the paper's own entities left out: the docs show them elsewhere)."""
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(store_dir)
    pid = next(p.id for p in store.list_papers(limit=1000).items if p.title.startswith(PAPER_RELATED_TITLE))
    out = kg("paper", pid, "-k", "3", "--store-dir", str(store_dir))
    return f"$ kg paper {pid} -k 3\n…\n" + out[out.index("RELATED"):]


def leaderboard_dataset(store_dir: Path) -> str:
    """The name of the seeds dataset with the most reported scores: the leaderboard examples show it."""
    from kg.store.embedded import EmbeddedStore

    rows = EmbeddedStore(store_dir).cypher(
        "MATCH (r:Result {kind: 'score'})-[:ON_DATASET]->(d:Dataset) RETURN d.name AS name, count(r) AS n "
        "ORDER BY n DESC, name LIMIT 1").rows
    if not rows:
        raise SystemExit("make_docs: the seeds store has no reported results on a dataset: the leaderboard "
                         "examples (kg leaderboard, /leaderboards) need some")
    return str(rows[0][0])


def leaderboard_block(store_dir: Path) -> str:
    """``kg leaderboard NAME --limit 3`` on the seeds dataset with the most reported scores."""
    return command_block([["leaderboard", leaderboard_dataset(store_dir), "--limit", "3"]], store_dir)


def readme_queries(text: str) -> dict[str, str]:
    """Each ``queryN`` marker's query in ``text``: the ```cypher block right above it, on one line."""
    out = {}
    for m in BLOCK.finditer(text):
        if m.group("name").startswith("query"):
            above = text[: m.start()].rsplit("```cypher\n", 1)[1].split("```", 1)[0]
            out[m.group("name")] = " ".join(above.split())
    return out


def doc_queries(docs: Mapping[str, str]) -> dict[str, str]:
    """Every ``queryN`` marker's query over all of ``docs``; one name under two different queries is an error."""
    out: dict[str, str] = {}
    for path, text in docs.items():
        for name, query in readme_queries(text).items():
            if out.setdefault(name, query) != query:
                raise SystemExit(f"make_docs: {path}: block {name} is under another query than elsewhere: "
                                 "give it a name of its own")
    return out


def query_blocks(docs: Mapping[str, str], store_dir: Path) -> dict[str, str]:
    """Each ``queryN`` marker's answer: the ```cypher block right above it, run with ``kg cypher``."""
    return {name: fenced(kg("cypher", query, "--store-dir", str(store_dir)))
            for name, query in doc_queries(docs).items()}


def run_eval() -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    RECORDED["eval"].write_text("$ kg eval\n" + kg("eval").strip() + "\n", encoding="utf-8")


def render(docs: Mapping[str, str], *, png: bool = False) -> dict[str, str]:
    """Every generated block by name, from a fresh build of seeds/ and the recorded files."""
    blocks = {name: fenced(path.read_text(encoding="utf-8")) for name, path in RECORDED.items() if path.exists()}
    blocks["examples-build"] = examples_block()
    with seeds_store() as (store_dir, build_out):
        blocks["build"] = fenced("$ kg build seeds/\n" + build_out)
        blocks |= {name: command_block(commands, store_dir) for name, commands in COMMANDS.items()}
        blocks |= api_blocks(store_dir)
        blocks["related"] = fenced(related_block(store_dir))
        blocks["leaderboard"] = leaderboard_block(store_dir)
        blocks |= query_blocks(docs, store_dir)
        if png:
            overview_png(store_dir)
    return blocks


def stale(text: str, blocks: Mapping[str, str]) -> list[str]:
    """Names of the blocks in ``text`` that differ from ``blocks`` (after normalise), or that nothing generates."""
    bad = []
    for m in BLOCK.finditer(text):
        want = blocks.get(m.group("name"))
        if want is None or normalise(m.group("body")) != normalise(want):
            bad.append(m.group("name"))
    return bad


def stale_docs(docs: Mapping[str, str], blocks: Mapping[str, str]) -> list[str]:
    """``PATH: NAME`` for every stale block of every file."""
    return [f"{path}: {name}" for path, text in docs.items() for name in stale(text, blocks)]


def rewrite(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with its stale blocks replaced; a block that differs only in its timings is left as it is."""
    def sub(m: re.Match[str]) -> str:
        want = blocks.get(m.group("name"))
        if want is None or normalise(want) == normalise(m.group("body")):
            return m.group(0)
        return m.group(1) + want + m.group(4)

    return BLOCK.sub(sub, text)


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
                        f"--screenshot={DOCS / 'overview.png'}", html.as_uri()],
                       check=True, capture_output=True, timeout=180)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="Only say which blocks are stale; exit 1 if any.")
    ap.add_argument("--eval", action="store_true", help="Run kg eval again (minutes) and record its output.")
    ap.add_argument("--no-png", action="store_true", help="Leave docs/overview.png alone.")
    args = ap.parse_args()
    docs = read_docs()
    unknown = [f"{path}: {name}" for path, text in docs.items() for m in BLOCK.finditer(text)
               if not renderable(name := m.group("name"))]
    if unknown:
        print("make_docs: no renderer for blocks " + ", ".join(unknown), file=sys.stderr)
        return 1
    if args.eval:
        run_eval()
    blocks = render(docs, png=not (args.check or args.no_png))
    if args.check:
        bad = stale_docs(docs, blocks)
        print("README.md and docs/*.md are up to date" if not bad else "stale blocks: " + ", ".join(bad))
        return 1 if bad else 0
    written = []
    for path, text in docs.items():
        new = rewrite(text, blocks)
        if new != text:
            (ROOT / path).write_text(new, encoding="utf-8")
            written.append(path)
    print(f"make_docs: {len(block_names(docs))} blocks in {len(docs)} files; rewrote "
          + (", ".join(written) or "nothing") + ("" if args.no_png else "; and docs/overview.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
