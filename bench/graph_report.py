"""What a built graph holds, as a reader judges it: entities per paper and type, the most used names, the five
example queries of docs/neo4j.md; two stores side by side.

    python bench/graph_report.py STORE_DIR [STORE_DIR2] [--names before,after] [--top 20] [--rows 10]

Prints markdown tables for each embedded store: papers, entities and edges; entities per paper (entity nodes over
papers, and the distinct entities a paper links to, on average); per type the nodes and the links per paper; edges
per type; the ``--top`` most used datasets, methods, models and tasks, ranked by the number of papers that link
to them (any paper edge: PROPOSES, USES, EVALUATES_ON, ADDRESSES, MENTIONS); then each of docs/neo4j.md's five
example queries (the ```cypher block above each ``docs:queryN`` marker, so the docs and this report cannot
drift apart) with its first ``--rows`` rows per store, run through kg's own engine. Stores are opened one at a
time (a large one takes gigabytes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from kg.errors import KGError
from kg.graph import ENTITY_LABELS
from kg.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from make_docs import doc_queries  # noqa: E402 - scripts/ is no package

TOP_LABELS = ("Dataset", "Method", "Model", "Task")
_IS_ENTITY = " OR ".join(f"e:{lab}" for lab in ENTITY_LABELS.values())


def collect(store: EmbeddedStore, *, top: int = 20, rows: int = 10, docs: Path = ROOT / "docs" / "neo4j.md") -> dict:
    """Everything the report shows for one store, as plain values."""
    st = store.stats()
    links = dict(store.cypher(f"MATCH (p:Paper)-->(e) WHERE {_IS_ENTITY} WITH DISTINCT p, e "
                              "RETURN labels(e)[0] AS type, count(*) AS links").rows)
    tops = {lab: [tuple(r) for r in store.cypher(
        f"MATCH (p:Paper)-->(e:{lab}) RETURN e.name AS name, count(DISTINCT p) AS papers "
        "ORDER BY papers DESC, name LIMIT $top", {"top": top}).rows] for lab in TOP_LABELS}
    queries = {}
    for name, query in doc_queries({docs.name: docs.read_text(encoding="utf-8")}).items():
        r = store.cypher(query, max_rows=10**6)
        queries[name] = {"query": query, "columns": r.columns, "rows": r.rows[:rows], "total": len(r.rows)}
    papers = st.papers or 1  # an empty store: zeros, not a division error
    return {"papers": st.papers, "entities": st.entities, "edges": st.edges,
            "linked_per_paper": sum(links.values()) / papers,
            "types": {ty: (st.entities_by_type.get(ty, 0), links.get(lab, 0) / papers)
                      for ty, lab in ENTITY_LABELS.items()},
            "edge_types": st.edges_by_type, "top": tops, "queries": queries}


def _cell(v: Any, width: int = 60) -> str:
    if isinstance(v, list) and all(isinstance(x, str) for x in v):  # a path's names, each cut short
        return " – ".join(_cell(x, 30) for x in v)
    s = v if isinstance(v, str) else f"{v:.3f}" if isinstance(v, float) else orjson.dumps(v).decode()
    s = " ".join(s.split()).replace("|", "\\|")
    return s if len(s) <= width else s[: width - 1] + "…"


def table(header: list[str], body: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(_cell(v) for v in row) + " |" for row in body])


def render(reports: list[tuple[str, dict]]) -> str:
    """The markdown report of one or two stores, ``(name, collect(...))`` each, columns in that order."""
    names = [n for n, _ in reports]
    rs = [r for _, r in reports]
    out = ["## Graph", table(["", *names], [
        ["papers", *(f"{r['papers']:,}" for r in rs)],
        ["entities", *(f"{r['entities']:,}" for r in rs)],
        ["entities / papers", *(f"{r['entities'] / (r['papers'] or 1):.2f}" for r in rs)],
        ["entities linked per paper", *(f"{r['linked_per_paper']:.2f}" for r in rs)],
        ["edges", *(f"{r['edges']:,}" for r in rs)]])]
    out += ["## Entities per type (nodes; links per paper)",
            table(["type", *(f"{n} {c}" for n in names for c in ("nodes", "per paper"))],
                  [[lab.lower(), *(v for r in rs for v in (f"{r['types'][ty][0]:,}", f"{r['types'][ty][1]:.2f}"))]
                   for ty, lab in ENTITY_LABELS.items()])]
    edge_types = sorted({t for r in rs for t in r["edge_types"]}, key=lambda t: (-rs[-1]["edge_types"].get(t, 0), t))
    out += ["## Edges per type", table(["edge", *names], [[t, *(f"{r['edge_types'].get(t, 0):,}" for r in rs)]
                                                          for t in edge_types])]
    for lab in TOP_LABELS:
        n = max(len(r["top"][lab]) for r in rs)
        body = [[i + 1, *(v for r in rs for v in (r["top"][lab][i] if i < len(r["top"][lab]) else ("", "")))]
                for i in range(n)]
        out += [f"## Most used {lab.lower()}s (by papers)",
                table(["#", *(f"{name} {c}" for name in names for c in (lab.lower(), "papers"))], body)]
    out.append("## The five example queries (docs/neo4j.md)")
    for q in rs[0]["queries"]:
        out.append(f"### Example {q.replace('query', 'query ')}\n\n```cypher\n{rs[0]['queries'][q]['query']}\n```")
        for name, r in reports:
            a = r["queries"][q]
            shown = f"first {len(a['rows'])} of {a['total']:,} rows" if a["total"] > len(a["rows"]) else \
                f"{a['total']} row{'s' * (a['total'] != 1)}"
            out.append(f"**{name}** ({shown})" + (f"\n\n{table(a['columns'], a['rows'])}" if a["rows"] else ""))
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stores", nargs="+", type=Path, metavar="STORE_DIR", help="one or two embedded stores")
    ap.add_argument("--names", help="column names, comma-separated (default: the folders' names)")
    ap.add_argument("--top", type=int, default=20, help="names per most-used list")
    ap.add_argument("--rows", type=int, default=10, help="rows shown per example query and store")
    args = ap.parse_args(argv)
    if len(args.stores) > 2:
        ap.error("one or two stores")
    names = args.names.split(",") if args.names else [s.name for s in args.stores]
    if len(names) != len(args.stores):
        ap.error(f"--names: {len(names)} names for {len(args.stores)} stores")
    reports = []
    try:
        for name, path in zip(names, args.stores, strict=True):
            if not path.is_dir():
                raise KGError(f"{path}: no such store folder")
            with EmbeddedStore(path) as store:  # one open at a time
                reports.append((name, collect(store, top=args.top, rows=args.rows)))
    except KGError as exc:
        print(f"graph_report: {exc}", file=sys.stderr)
        return 1
    print(render(reports), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
