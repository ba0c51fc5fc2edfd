"""kg's embedded Cypher engine beside LadybugDB (embedded, in-process) and optionally a Bolt server, same graph.

    python bench/cypher_engines.py --store /tmp/kg-5k            # a store built by `kg build`
    python bench/cypher_engines.py --n 5000 --jobs 2             # builds the first N arXiv abstracts first
    python bench/cypher_engines.py --store DIR --bolt bolt://localhost:7687   # and a server holding the same graph
    python bench/cypher_engines.py --store DIR --engines kg --only README     # kg alone (no LadybugDB load)

The store's graph is loaded into a fresh LadybugDB database (`pip install -e .[bench]`); every query is run once
on every engine and the answers compared (the run stops on a difference), then the engines take turns query by
query, `--runs` times each, so load on the machine hits them alike. Prints median and p95 per query and engine
and the ratio of kg's median to LadybugDB's. Parameters (hub entities, a concept pair four hops apart, ...) are
picked from the graph itself, so the same store gives the same queries.
"""

from __future__ import annotations

import argparse
import csv
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

ENTITY_LABELS = ("Method", "Model", "Dataset", "Task", "Metric", "Concept")
PAPER_EDGES = "USES|EVALUATES_ON|ADDRESSES|PROPOSES|MENTIONS"
# Node columns loaded into LadybugDB: every property a query reads (lists and abstracts stay out).
NODE_COLUMNS = {"id": "STRING", "name": "STRING", "title": "STRING", "type": "STRING", "venue": "STRING",
                "year": "INT64", "paper_count": "INT64", "mention_count": "INT64", "entity_count": "INT64"}
REL_COLUMNS = {"score": "DOUBLE", "paper_id": "STRING"}
# Fields split by U+001F (no text holds it) and never quoted: LadybugDB's CSV reader misreads some quoted fields.
CSV_OPTIONS = "DELIM='\x1f', QUOTE='\x1e', ESCAPE='\x1e', PARALLEL=false"


def _writer(fh: Any) -> Any:
    return csv.writer(fh, delimiter="\x1f", quoting=csv.QUOTE_NONE, quotechar="\x1e", escapechar=None)


@dataclass
class Query:
    name: str
    kg: str  # kg's and the Bolt server's text
    params: dict[str, Any]
    ladybug: str | None = None  # LadybugDB's text when its dialect differs
    ordered: bool = True  # False: compare as multisets (LadybugDB cannot ORDER BY a list)


def pick_parameters(g: Any) -> dict[str, Any]:
    """Hub entities, a paper on the hub, a concept pair at distance 4 and one sharing papers, a title."""
    nodes = g._node
    entities = [n for n, d in nodes.items() if d.get("label") in ENTITY_LABELS]
    by_papers = sorted(entities, key=lambda n: (-nodes[n].get("paper_count", 0), n))
    hub = "large-language-model" if "large-language-model" in nodes else by_papers[0]
    target = 0.42 * nodes[hub].get("paper_count", 0)  # the 620 beside 1,466
    mid = min(by_papers[1:200], key=lambda n: (abs(nodes[n].get("paper_count", 0) - target), n))
    hub_papers = sorted(p for p in g._pred[hub] if nodes[p].get("label") == "Paper")
    paper = hub_papers[len(hub_papers) // 2]
    datasets = [n for n in by_papers if nodes[n]["label"] == "Dataset"]
    method = next(n for n in by_papers if nodes[n]["label"] == "Method")
    imagenet = "imagenet" if "imagenet" in nodes else datasets[0]
    cifar = next((nodes[n]["name"] for n in datasets if nodes[n]["name"] == "CIFAR-10"), nodes[datasets[1]]["name"])
    concepts = [n for n in by_papers if nodes[n]["label"] == "Concept"]
    a = concepts[len(concepts) // 4]
    far = _at_distance(g, a, 4, "Concept")
    if "mutual-information" in nodes and "conditional-mutual-information" in nodes:
        c1, c2 = "mutual-information", "conditional-mutual-information"
    else:
        c1 = concepts[0]
        shared: Counter[str] = Counter()
        for p in g._pred[c1]:
            shared.update(x for x in g._succ[p] if x != c1 and nodes[x]["label"] == "Concept")
        c2 = min(shared, key=lambda x: (-shared[x], x))
    papers = sorted(n for n, d in nodes.items() if d.get("label") == "Paper")
    title = nodes[papers[len(papers) // 3]]["title"][:40]
    return {"hub": hub, "mid": mid, "paper": paper, "imagenet": imagenet, "cifar": cifar, "sp_a": a,
            "sp_b": far, "method": method, "c1": c1, "c2": c2, "title": title, "known": by_papers[len(by_papers) // 2]}


def _at_distance(g: Any, start: str, hops: int, label: str) -> str:
    seen, frontier = {start}, [start]
    for _ in range(hops):
        nxt = []
        for u in frontier:
            for v in (*g._succ[u], *g._pred[u]):
                if v not in seen:
                    seen.add(v)
                    nxt.append(v)
        frontier = nxt
    found = sorted(v for v in frontier if g._node[v]["label"] == label)
    if not found:
        sys.exit(f"no {label} at distance {hops} from {start}")
    return found[len(found) // 2]


def queries(p: dict[str, Any]) -> list[Query]:
    two_hop = ("MATCH (e {id: $id})<-[:" + PAPER_EDGES + "]-(p:Paper)-[:" + PAPER_EDGES + "]->(o) WHERE o <> e "
               "RETURN o.id AS other, count(*) AS papers ORDER BY papers DESC, other LIMIT 20")
    labels = " OR ".join(f"e:{lb}" for lb in ENTITY_LABELS)
    return [
        Query("entity by id", "MATCH (e {id: $id}) RETURN e.name AS name, e.paper_count AS papers", {"id": p["known"]}),
        Query("papers using an entity", "MATCH (e {id: $id})<-[:USES]-(p:Paper) RETURN p.id AS paper ORDER BY paper",
              {"id": p["method"]}),
        Query("top datasets", "MATCH (p:Paper)-[:EVALUATES_ON]->(d:Dataset) RETURN d.name AS dataset, count(*) AS "
              "papers ORDER BY papers DESC, dataset LIMIT 20", {}),
        Query(f"two-hop co-occurrence ({p['mid']})", two_hop, {"id": p["mid"]}),
        Query(f"two-hop co-occurrence ({p['hub']})", two_hop, {"id": p["hub"]}),
        Query("methods of papers on ImageNet", "MATCH (p:Paper)-[:EVALUATES_ON]->(:Dataset {id: $id}) "
              "MATCH (p)-[:PROPOSES|USES]->(m:Method) RETURN m.name AS method, count(DISTINCT p) AS papers "
              "ORDER BY papers DESC, method", {"id": p["imagenet"]}),
        Query("shortestPath, two concepts 4 apart", "MATCH (a:Concept {id: $a}), (b:Concept {id: $b}) "
              "MATCH path = shortestPath((a)-[*..6]-(b)) RETURN length(path) AS hops", {"a": p["sp_a"], "b": p["sp_b"]},
              ladybug="MATCH path = (a:Concept {id: $a})-[* SHORTEST 1..6]-(b:Concept {id: $b}) "
                      "RETURN length(path) AS hops"),
        Query("full scan, paper_count >= 5 by type", "MATCH (e) WHERE e.paper_count >= 5 RETURN e.type AS type, "
              "count(*) AS n ORDER BY type", {}),
        Query("README 1: related papers", "MATCH (p:Paper)-[r:RELATED_TO]->(q:Paper) WHERE p.title CONTAINS $t "
              "RETURN p.title AS paper, q.title AS related, r.score AS score ORDER BY paper, score DESC, related",
              {"t": p["title"]}),
        Query("README 2: most used datasets", "MATCH (d:Dataset)<-[:EVALUATES_ON]-(p:Paper) RETURN d.name AS dataset, "
              "count(p) AS papers ORDER BY papers DESC, dataset LIMIT 10", {}),
        Query("README 3: methods of CIFAR-10 papers", "MATCH (p:Paper)-[:EVALUATES_ON]->(:Dataset {name: $name}) "
              "MATCH (p)-[:PROPOSES|USES]->(m:Method) RETURN m.name AS method, count(DISTINCT p) AS papers "
              "ORDER BY papers DESC, method", {"name": p["cifar"]}),
        Query("README 4: two-hop paths, two concepts", "MATCH path = (a:Concept {id: $a})-[*2]-(b:Concept {id: $b}) "
              "RETURN [n IN nodes(path) | coalesce(n.title, n.name)] AS via ORDER BY via", {"a": p["c1"], "b": p["c2"]},
              ladybug="MATCH path = (a:Concept {id: $a})-[* TRAIL 2..2]-(b:Concept {id: $b}) "
                      "RETURN list_transform(nodes(path), n -> coalesce(n.title, n.name)) AS via", ordered=False),
        Query("README 5: entities by type", f"MATCH (e) WHERE {labels} RETURN labels(e)[0] AS type, count(*) AS "
              "entities ORDER BY entities DESC, type", {},
              ladybug=f"MATCH (e:{':'.join(ENTITY_LABELS)}) RETURN label(e) AS type, count(*) AS entities "
                      "ORDER BY entities DESC, type"),
        Query("paper two-hop (README Scale)", "MATCH (p:Paper {id: $id})-[:USES|EVALUATES_ON|ADDRESSES]->(e)"
              "<-[:USES|EVALUATES_ON|ADDRESSES]-(q:Paper) WHERE q <> p RETURN q.id AS paper, count(e) AS shared "
              "ORDER BY shared DESC, paper LIMIT 10", {"id": p["paper"]}),
    ]


def load_ladybug(g: Any, where: Path) -> Any:
    """A LadybugDB database holding ``g``: one node table per label, one relationship table per type."""
    import ladybug

    where.mkdir(parents=True, exist_ok=True)
    db = ladybug.Database(str(where / "db"))
    conn = ladybug.Connection(db)
    cols = ", ".join(f"{k} {t}" for k, t in NODE_COLUMNS.items())
    by_label: dict[str, list[dict[str, Any]]] = {}
    for d in g._node.values():
        by_label.setdefault(d["label"], []).append(d)
    for label, rows in sorted(by_label.items()):
        conn.execute(f"CREATE NODE TABLE {label}({cols}, PRIMARY KEY(id))")
        path = where / f"n_{label}.csv"
        with open(path, "w", newline="") as fh:
            w = _writer(fh)
            for d in rows:
                w.writerow(["" if d.get(k) is None else d[k] for k in NODE_COLUMNS])
        conn.execute(f"COPY {label} FROM '{path}' ({CSV_OPTIONS})")
    label = {n: d["label"] for n, d in g._node.items()}
    by_type: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
    for u, nbrs in g._succ.items():
        for v, keydict in nbrs.items():
            for d in keydict.values():
                by_type.setdefault((d["type"], label[u], label[v]), []).append(
                    (u, v, *("" if d.get(k) is None else d[k] for k in REL_COLUMNS)))
    types: dict[str, list[tuple[str, str]]] = {}
    for t, a, b in by_type:
        types.setdefault(t, []).append((a, b))
    rel_cols = ", ".join(f"{k} {t}" for k, t in REL_COLUMNS.items())
    for t, pairs in sorted(types.items()):
        conn.execute(f"CREATE REL TABLE {t}({', '.join(f'FROM {a} TO {b}' for a, b in sorted(pairs))}, {rel_cols})")
    for (t, a, b), rows in sorted(by_type.items()):
        path = where / f"r_{t}_{a}_{b}.csv"
        with open(path, "w", newline="") as fh:
            _writer(fh).writerows(rows)
        conn.execute(f"COPY {t} FROM '{path}' (from='{a}', to='{b}', {CSV_OPTIONS})")
    return db, conn


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 9)
    if isinstance(v, list | tuple):
        return tuple(_norm(x) for x in v)
    return v


def answer(rows: list[list[Any]], ordered: bool) -> list[tuple[Any, ...]]:
    out = [tuple(_norm(v) for v in r) for r in rows]
    return out if ordered else sorted(out, key=repr)


def _ms(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs) * 1000, xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", type=Path, help="a store built by `kg build` (else --n builds one)")
    ap.add_argument("--n", type=int, default=5000, help="abstracts to build when --store is not given")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=21, help="timed runs per query and engine")
    ap.add_argument("--bolt", help="Bolt URI of a server holding the same graph (kg build --store neo4j)")
    ap.add_argument("--bolt-user", default="neo4j")
    ap.add_argument("--bolt-password", default="")
    ap.add_argument("--only", help="run only queries whose name contains this (several: comma-separated)")
    ap.add_argument("--engines", default="kg,LadybugDB",
                    help="comma-separated engines to time (kg, LadybugDB; Bolt comes with --bolt); "
                         "`kg` alone skips loading LadybugDB (minutes at 83k abstracts) and the answer check")
    args = ap.parse_args()

    from kg.store.embedded import EmbeddedStore

    store_dir = args.store
    if store_dir is None:
        from run import write_slice  # bench/run.py

        tmp = Path(tempfile.mkdtemp(prefix="kg-cypher-bench-"))
        write_slice(args.n, tmp / "input.jsonl")
        store_dir = tmp / "store"
        subprocess.run([sys.executable, "-m", "kg", "build", str(tmp / "input.jsonl"), "--store-dir", str(store_dir),
                        "--jobs", str(args.jobs), "--no-progress"], check=True)
    t0 = time.perf_counter()
    store = EmbeddedStore(store_dir)
    g = store.graph
    kg_open = time.perf_counter() - t0
    params = pick_parameters(g)
    only = [x for x in (args.only or "").split(",") if x]
    qs = [q for q in queries(params) if not only or any(x in q.name for x in only)]
    wanted = {x.strip() for x in args.engines.split(",") if x.strip()}
    if not wanted <= {"kg", "LadybugDB"} or "kg" not in wanted:
        sys.exit(f"--engines: kg and optionally LadybugDB, got {args.engines!r}")
    lb_load = lb_size = 0.0
    with tempfile.TemporaryDirectory(prefix="kg-ladybug-") as lbdir:
        engines: dict[str, Callable[[Query], list[list[Any]]]] = {
            "kg": lambda q: store.cypher(q.kg, q.params, max_rows=1_000_000, timeout_s=120).rows,
        }
        if "LadybugDB" in wanted:
            t0 = time.perf_counter()
            db, conn = load_ladybug(g, Path(lbdir))
            lb_load = time.perf_counter() - t0
            engines["LadybugDB"] = lambda q: conn.execute(q.ladybug or q.kg, q.params).get_all()
        if args.bolt:
            from kg.store.neo4j import Neo4jStore

            bolt = Neo4jStore(args.bolt, args.bolt_user, args.bolt_password)
            engines["Bolt"] = lambda q: bolt.cypher(q.kg, q.params, max_rows=1_000_000, timeout_s=120).rows
        rows: dict[str, int] = {}
        for q in qs:  # same answers everywhere, or no figures
            want = answer(engines["kg"](q), q.ordered)
            rows[q.name] = len(want)
            for name, run in engines.items():
                got = answer(run(q), q.ordered)
                if got != want:
                    sys.exit(f"{q.name}: {name} answers differently from kg\n  kg:  {want[:5]}\n  {name}: {got[:5]}")
        # A served store's Cypher worker starts from a frozen heap (api/cypher_pool.py); picking the parameters
        # above decoded a good part of the graph's edges into new objects, which full collections would walk.
        gc.collect()
        gc.freeze()
        times: dict[tuple[str, str], list[float]] = {(q.name, e): [] for q in qs for e in engines}
        for _ in range(args.runs):
            for q in qs:
                for name, run in engines.items():
                    t = time.perf_counter()
                    run(q)
                    times[q.name, name].append(time.perf_counter() - t)
        gc.collect()
        lb_size = sum(f.stat().st_size for f in Path(lbdir).rglob("*") if f.is_file() and f.suffix != ".csv")

    stats = store.graph
    print(f"graph      {len(store._papers):,} papers, {len(stats):,} nodes, {stats.number_of_edges():,} edges "
          f"({store_dir})")
    lb = "LadybugDB" in engines
    print(f"open       kg {kg_open:.2f} s ({store.loaded_from})"
          + (f"; LadybugDB load (CSV COPY) {lb_load:.1f} s, {lb_size / 1e6:.0f} MB" if lb else ""))
    print(f"params     {params}")
    print(f"runs       {args.runs} per query and engine, interleaved; medians / p95 in ms"
          + ("; ratio = kg / LadybugDB" if lb else f"; {', '.join(engines)} only, answers not compared"))
    head = f"| query | rows | {' | '.join(engines)} |" + (" kg / LadybugDB |" if lb else "")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for q in qs:
        cells = []
        for name in engines:
            med, p95 = _ms(times[q.name, name])
            cells.append(f"{med:.2f} / {p95:.2f}")
        if lb:
            kg_med, lb_med = (statistics.median(times[q.name, e]) for e in ("kg", "LadybugDB"))
            cells.append(f"{kg_med / lb_med:.2f}")
        print(f"| {q.name} | {rows[q.name]} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
