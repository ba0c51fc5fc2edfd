"""A store's size on disk against its input, and how fast it opens: several stores side by side, interleaved.

    python bench/store_size.py STORE_DIR [STORE_DIR ...] --input INPUT [--rounds 5]

Per store: every file and folder it holds (``fulltext/`` summed), the total and its ratio to the input's size;
then, in a fresh process per sample, the seconds ``EmbeddedStore(dir).stats()`` takes (opening the store) and
the seconds of a first query that decodes a hub entity's edges and their evidence sentences, as wall-clock and as
CPU time (steadier on a busy machine). Samples alternate between the stores, so load slows them alike; medians,
and the ratio to the first store.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from kg.store.embedded import EmbeddedStore
t1, c1 = time.perf_counter(), time.process_time()
s = EmbeddedStore(sys.argv[1]); s.stats()
t2, c2 = time.perf_counter(), time.process_time()
hub = s.cypher("MATCH (p:Paper)-[:USES]->(e) RETURN e.id AS id, count(p) AS n ORDER BY n DESC, id LIMIT 1").rows[0][0]
r = s.cypher("MATCH (p:Paper)-[r]->(e {id: $id}) RETURN p.id, r.sentence ORDER BY p.id", {"id": hub}, max_rows=10**6)
t3, c3 = time.perf_counter(), time.process_time()
print(json.dumps({"open": t2 - t1, "first_query": t3 - t2, "open_cpu": c2 - c1, "first_query_cpu": c3 - c2,
                  "rows": len(r.rows), "from": s.loaded_from}))
"""


def sizes(store: Path) -> dict[str, int]:
    """Bytes per top-level entry of ``store`` (a folder counts everything under it)."""
    out = {}
    for p in sorted(store.iterdir()):
        files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]
        out[p.name + ("/" if p.is_dir() else "")] = sum(f.stat().st_size for f in files)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stores", nargs="+", type=Path)
    ap.add_argument("--input", type=Path, required=True, help="the input the stores were built from")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    size_in = args.input.stat().st_size
    print(f"input {args.input}: {size_in / 1e6:,.1f} MB")
    for store in args.stores:
        sz = sizes(store)
        parts = ", ".join(f"{k} {v / 1e6:,.1f}" for k, v in sz.items() if v >= 50_000)
        total = sum(sz.values())
        print(f"{store}: {total / 1e6:,.1f} MB = {total / size_in:.2f}x the input ({parts})")
    samples: dict[Path, list[dict]] = {s: [] for s in args.stores}
    for _ in range(args.rounds):
        for store in args.stores:
            r = subprocess.run([sys.executable, "-c", _PROBE, str(store)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{store}: {r.stderr[-2000:]}")
            samples[store].append(json.loads(r.stdout.splitlines()[-1]))
    ref = args.stores[0]
    keys = ("open", "first_query", "open_cpu", "first_query_cpu")
    med = {s: {k: statistics.median(x[k] for x in v) for k in keys} for s, v in samples.items()}
    for store, m in med.items():
        rows = {x["rows"] for x in samples[store]}
        figures = ", ".join(f"{k.replace('_', ' ')} {m[k]:.3f} s (x{m[k] / med[ref][k]:.2f})" for k in keys)
        print(f"{store} (from {samples[store][0]['from']}, {sorted(rows)} rows): {figures}")


if __name__ == "__main__":
    main()
