"""The leaderboards of the three most reported datasets of the 5k arXiv slice (issue 34's "Done when").

    .venv/bin/python scripts/leaderboards_5k.py [STORE_DIR]        # default /tmp/kg-5k
    .venv/bin/python scripts/leaderboards_5k.py STORE_DIR --no-build --top 5 --limit 10

Builds the 5,000-abstract store (the first 5,000 lines of ../shared/data/corpus/arxiv-csai-2024-2026.jsonl.gz,
as in docs/serving.md and bench/run.py) with `kg build --jobs 2` into STORE_DIR (re-building an existing store
re-extracts only what changed), asks `kg cypher` which datasets have the most Result nodes, and prints
`kg leaderboard DATASET --limit 10` for each. Runs `python -m kg` with this interpreter (the project's .venv), so
PYTHONPATH=<a `git archive` of a commit> measures that commit's code, not the working tree's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"
KG = [sys.executable, "-m", "kg"]
TOP = """MATCH (r:Result)-[:ON_DATASET]->(d)
RETURN d.id AS id, d.name AS name, count(*) AS results,
       sum(CASE WHEN r.kind = 'score' THEN 1 ELSE 0 END) AS scores
ORDER BY results DESC, name LIMIT $k"""


def write_slice(n: int, out: Path) -> int:
    with gzip.open(CORPUS, "rb") as src, open(out, "wb") as dst:
        for i, line in enumerate(src):
            if i >= n:
                return i
            dst.write(line)
    return i + 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", nargs="?", default="/tmp/kg-5k", type=Path)
    ap.add_argument("--n", type=int, default=5000, help="abstracts from the start of the corpus")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--top", type=int, default=3, help="datasets")
    ap.add_argument("--limit", type=int, default=10, help="rows per metric")
    ap.add_argument("--no-build", action="store_true", help="use the store as it is")
    a = ap.parse_args()
    import kg

    print(f"# kg from {Path(kg.__file__).parent}", flush=True)
    if not a.no_build:
        a.store.mkdir(parents=True, exist_ok=True)
        src = a.store.parent / f"{a.store.name}-input.jsonl"
        n = write_slice(a.n, src)
        print(f"# kg build of the first {n} lines of {CORPUS.name} into {a.store} (--jobs {a.jobs})", flush=True)
        t0 = time.perf_counter()
        subprocess.run(
            [*KG, "build", str(src), "--store-dir", str(a.store), "--jobs", str(a.jobs), "--no-progress"], check=True
        )
        print(f"# built in {time.perf_counter() - t0:.0f} s", flush=True)
    r = subprocess.run(
        [*KG, "cypher", TOP, "--param", f"k={a.top}", "--store-dir", str(a.store), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    answer = json.loads(r.stdout)
    rows = [dict(zip(answer["columns"], row, strict=True)) for row in answer["rows"]]
    print(f"\n$ kg cypher '{' '.join(TOP.split())}' --param k={a.top}")
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    for row in rows:
        print(f"\n$ kg leaderboard '{row['name']}' --limit {a.limit}    # {row['id']}", flush=True)
        subprocess.run(
            [*KG, "leaderboard", row["id"], "--limit", str(a.limit), "--store-dir", str(a.store)], check=True
        )


if __name__ == "__main__":
    main()
