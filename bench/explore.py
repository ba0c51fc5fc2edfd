"""Latency of the explore reads on a built store (p50/p95 per endpoint, through the app in-process, with the CPU
time per call beside it: a busy machine inflates the wall-clock figures, not that one), the full-text
index's build time, and the timeline-against-Cypher quality check.

    python bench/explore.py STORE_DIR [--dates-from CORPUS.jsonl[.gz]] [--rounds 30] [--check-only]

``--dates-from`` copies each record's ``published`` date onto the store's papers in memory, for stores built
before papers kept it (the arXiv corpus has it): the trends and monthly timelines then have days to work
with. ``/papers?q=`` is timed beside the linear scan it replaced (every paper's title and abstract searched
for each word), run in the same process on the same store.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient

from api.main import create_app
from api.settings import Settings
from kg.errors import NotFoundError
from kg.fulltext import FullTextIndex
from kg.graph import PAPER_EDGE_TYPES
from kg.store.embedded import EmbeddedStore

WELL_KNOWN = ["large language models", "diffusion models", "GSM8K", "reinforcement learning", "transformer",
              "ImageNet", "retrieval-augmented generation", "chain-of-thought", "federated learning", "CLIP",
              "vision-language models", "knowledge graphs"]
QUERIES = ["large language models", "diffusion", '"chain of thought"', "graph neural network", "federated learning",
           "reinforcement learning from human feedback", "GSM8K", "protein", "xyzzy", "time series forecasting"]


def overlay_dates(store: EmbeddedStore, corpus: Path) -> int:
    opener = gzip.open if corpus.suffix == ".gz" else open
    dates = {}
    with opener(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("id") and rec.get("published"):
                dates[rec["id"]] = rec["published"]
    n = 0
    for p in store.by_label("Paper"):
        d = store.graph.nodes[p]
        if "published" not in d and p in dates:
            d["published"] = dates[p]
            n += 1
    return n


def timed(f: Callable[[], object], rounds: int) -> tuple[float, float, float, float]:
    """(first call, p50, p95, CPU p95) in milliseconds: wall-clock times, and the process's CPU time per call,
    which a busy machine does not inflate (the app runs in this process's threads)."""
    t = time.perf_counter()
    f()
    first = 1000 * (time.perf_counter() - t)
    xs, cpu = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        f()
        xs.append(1000 * (time.perf_counter() - t))
        cpu.append(1000 * (time.process_time() - c))
    xs.sort()
    cpu.sort()
    p95 = min(len(xs) - 1, int(0.95 * len(xs)))
    return first, statistics.median(xs), xs[p95], cpu[p95]


def well_known(store: EmbeddedStore) -> list[str]:
    out = []
    for name in WELL_KNOWN:
        try:
            out.append(store.resolve_entity(name))
        except NotFoundError:
            continue
    for e in store.list_entities(limit=30).items:  # fill up with the most common entities
        if len(out) >= 10:
            break
        if e.id not in out:
            out.append(e.id)
    return out[:10]


def check(store: EmbeddedStore, ids: list[str]) -> bool:
    """Each entity's timeline per year against a Cypher count of its papers per year."""
    ok = True
    query = ("MATCH (p:Paper)-[r]->(e {id: $id}) WHERE type(r) IN $types "
             "RETURN p.year AS year, count(DISTINCT p) AS papers ORDER BY year")
    for eid in ids:
        rows = store.cypher(query, {"id": eid, "types": list(PAPER_EDGE_TYPES)}).rows
        want = {str(y): n for y, n in rows if y is not None}
        got = {p.period: p.papers for p in store.timeline(eid).years if p.papers}
        same = got == want
        ok &= same
        print(f"  {'ok ' if same else 'BAD'} {eid:<40} timeline {got}  cypher {want}")
    return ok


def linear_scan(store: EmbeddedStore, q: str) -> int:
    """What /papers?q= did before the index: every word searched in every title and abstract."""
    terms = q.casefold().split()
    nodes = store.graph.nodes
    return sum(all(t in (nodes[p]["title"] + " " + nodes[p]["abstract"]).casefold() for t in terms)
               for p in store.by_label("Paper"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", help="a store directory built by `kg build`")
    ap.add_argument("--dates-from", type=Path, help="a JSON Lines corpus whose `published` dates to overlay")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--check-only", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    store = EmbeddedStore(args.store)
    print(f"store {args.store}: {store.stats().papers} papers, opened in {time.perf_counter() - t:.1f} s "
          f"(from {store.loaded_from})")
    if args.dates_from:
        print(f"published dates overlaid from {args.dates_from}: {overlay_dates(store, args.dates_from)} papers")
    dated = sum(1 for p in store.by_label("Paper") if store.graph.nodes[p].get("published") is not None)
    print(f"papers with a published date: {dated}")
    t = time.perf_counter()
    store._trend_index()  # (with the related-papers index it reads, when the store has to build that too)
    print(f"trend index build: {1000 * (time.perf_counter() - t):.0f} ms")
    ids = well_known(store)
    print("timeline against `kg cypher` counts per year:")
    ok = check(store, ids)
    if args.check_only:
        sys.exit(0 if ok else 1)

    nodes = store.graph.nodes
    papers = [(p, nodes[p]) for p in store.by_label("Paper")]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        FullTextIndex.build(papers, Path(tmp) / "fulltext", {"bench": 1})
        print(f"full-text index build: {time.perf_counter() - t:.2f} s for {len(papers)} papers (written to disk)")
    t = time.perf_counter()
    store._fulltext()
    print(f"full-text index open: {1000 * (time.perf_counter() - t):.0f} ms")

    # The response cache off: each URL is asked many times, and the figure wanted is the store's work,
    # not the cache replaying a repeated answer.
    client = TestClient(create_app(Settings(response_cache_mb=0), store=store))
    tasks = sorted(store.by_label("Task"), key=lambda e: -nodes[e]["paper_count"])
    datasets = sorted(store.by_label("Dataset"), key=lambda e: -nodes[e]["paper_count"])

    def get(url: str) -> Callable[[], object]:
        def call() -> object:
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code, r.text[:200])
            return r
        return call

    rows: list[tuple[str, str]] = [
        ("/trends", "/trends"),
        ("/trends?type=dataset", "/trends?type=dataset&limit=20"),
        ("/trends?min_count=2", "/trends?min_count=2&limit=50"),
    ]
    rows += [(f"timeline {e}", f"/entities/{quote(e)}/timeline") for e in ids]
    near_500 = min(tasks[3:], key=lambda e: abs(nodes[e]["paper_count"] - 500), default=None)  # the target's size
    rows += [(f"landscape task {e} ({nodes[e]['paper_count']} papers)", f"/entities/{quote(e)}/landscape")
             for e in [*tasks[:3], *([near_500] if near_500 else [])]]
    rows += [(f"landscape dataset {e} ({nodes[e]['paper_count']} papers)", f"/entities/{quote(e)}/landscape")
             for e in datasets[:1]]
    rows += [(f"/papers?q={q}", f"/papers?q={quote(q)}&limit=20") for q in QUERIES]
    rows += [(f"/search?q={q}", f"/search?q={quote(q)}&limit=20") for q in QUERIES]
    print(f"\n{'endpoint':<62}{'first ms':>10}{'p50 ms':>10}{'p95 ms':>10}{'CPU p95':>10}")
    for name, url in rows:
        first, p50, p95, cpu95 = timed(get(url), args.rounds)
        print(f"{name[:61]:<62}{first:>10.1f}{p50:>10.1f}{p95:>10.1f}{cpu95:>10.1f}")
    print("\n/papers?q= against the linear scan it replaced (same store, same process):")
    for q in QUERIES[:4]:
        _, ft50, _, _ = timed(lambda q=q: store.list_papers(q=q, limit=20), args.rounds)
        _, scan50, _, _ = timed(lambda q=q: linear_scan(store, q), max(3, args.rounds // 10))
        print(f"  {q:<46} index {ft50:7.2f} ms   scan {scan50:8.1f} ms   x{scan50 / max(ft50, 1e-6):.0f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
