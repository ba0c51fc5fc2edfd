"""Load rate of the Neo4j store: nodes and relationships written per second over Bolt.

    python bench/neo4j_load.py                      # seeds/ and a 10,000-abstract slice of the corpus
    python bench/neo4j_load.py --slice 2000         # a smaller slice
    python bench/neo4j_load.py --slice 0            # seeds only

The server is the one NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE name (options override), or,
with ``--arcadedb``, an ArcadeDB server with the Bolt plugin started from the arcadedb-embedded package.
Extraction (spaCy) is not timed: extractions are cached in ``--cache-dir`` so a re-run only loads. Each corpus
is loaded into an emptied database, then loaded again (the idempotent re-build a second ``kg build`` does).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.cache import ExtractionCache, record_hash  # noqa: E402
from kg.extract.pipeline import EXTRACTOR_VERSION, Extractor  # noqa: E402
from kg.graph import PaperInput, derive_graph  # noqa: E402
from kg.readers import PaperRecord, read_papers  # noqa: E402
from kg.store.arcadedb import arcadedb_server  # noqa: E402
from kg.store.neo4j import Neo4jStore  # noqa: E402
from kg.store.neo4j_connect import connect  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"


@contextmanager
def arcadedb(heap: str) -> Iterator[tuple[str, str, str, str]]:
    """An ArcadeDB server (Bolt plugin) in a temporary directory: (uri, user, password, database)."""
    root = Path(tempfile.mkdtemp(prefix="kg-bench-arcadedb-"))
    try:
        with arcadedb_server(root, password="kg-bench-pw", heap=heap) as server:
            yield server.uri, server.user, server.password, "kg"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def inputs_for(records: list[PaperRecord], cache: ExtractionCache) -> dict[str, PaperInput]:
    """Extractions for ``records``, from the cache where it has them (spaCy runs for the rest, untimed)."""
    cached = cache.load({record_hash(r) for r in records})
    todo = [r for r in records if record_hash(r) not in cached]
    if todo:
        print(f"  extracting {len(todo)} abstracts (cached for the next run) ...", flush=True)
        t0 = time.perf_counter()
        done = [(record_hash(r), PaperInput(r, x)) for r, x in
                zip(todo, Extractor().extract_many(r.abstract for r in todo), strict=True)]
        cache.append(done)
        cached.update(done)
        print(f"  extracted in {time.perf_counter() - t0:.0f} s", flush=True)
    out: dict[str, PaperInput] = {}
    for r in records:
        out.setdefault(r.id, cached[record_hash(r)])
    return out


def records(path: Path, limit: int | None) -> list[PaperRecord]:
    return [r for r in islice((x for x in read_papers([path]) if isinstance(x, PaperRecord)), limit)]


def load(name: str, store: Neo4jStore, inputs: dict[str, PaperInput]) -> None:
    graph = derive_graph(inputs.values())
    store.driver.execute_query("MATCH (n) DETACH DELETE n", database_=store.database)
    n, m = graph.number_of_nodes(), graph.number_of_edges()
    for run in ("load", "re-load"):
        t0 = time.perf_counter()
        store.replace_graph(graph, inputs)
        total = time.perf_counter() - t0
        w = store.last_write
        print(f"{name:>14} {run:<8} {len(inputs):>6} papers {n:>7} nodes {m:>8} rels  {total:7.1f} s  "
              f"nodes {n / w['nodes_s']:8.0f}/s  rels {m / w['rels_s']:8.0f}/s  "
              f"overall {(n + m) / total:8.0f} items/s", flush=True)
    assert store.stats().edges == m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slice", type=int, default=10_000, help="abstracts taken from the corpus (0: seeds only)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "kg-store" / "bench-cache",
                    help="extraction cache (git-ignored)")
    ap.add_argument("--arcadedb", action="store_true", help="start an ArcadeDB Bolt server for the run")
    ap.add_argument("--heap", default="4g", help="ArcadeDB's Java heap with --arcadedb")
    ap.add_argument("--neo4j-uri", default=os.environ.get("NEO4J_URI", "bolt://localhost:7687"))
    ap.add_argument("--neo4j-user", default=os.environ.get("NEO4J_USER", "neo4j"))
    ap.add_argument("--neo4j-password", default=os.environ.get("NEO4J_PASSWORD", ""))
    ap.add_argument("--neo4j-database", default=os.environ.get("NEO4J_DATABASE") or None)
    args = ap.parse_args()

    cache = ExtractionCache(args.cache_dir / "inputs.jsonl", EXTRACTOR_VERSION)
    corpora = [("seeds", inputs_for(records(ROOT / "seeds", None), cache))]
    if args.slice:
        corpora.append((f"corpus[:{args.slice}]", inputs_for(records(args.corpus, args.slice), cache)))

    server = arcadedb(args.heap) if args.arcadedb else None
    conn = server.__enter__() if server else (args.neo4j_uri, args.neo4j_user, args.neo4j_password,
                                             args.neo4j_database)
    try:
        driver = connect(*conn)
        store = Neo4jStore(driver, database=conn[3], batch_size=args.batch_size, cache_dir=args.cache_dir,
                           timeout_s=600)
        print(f"server: {store.server_agent()} at {conn[0]}; batch size {args.batch_size}", flush=True)
        for name, inputs in corpora:
            load(name, store, inputs)
        driver.close()
    finally:
        if server:
            server.__exit__(None, None, None)


if __name__ == "__main__":
    main()
