"""Related papers: an inverted index from entities to papers (IDF-weighted cosine, ``RelatedIndex``), the papers'
embeddings and TF-IDF rows (``TextIndex``), and their combination (``PaperSimilarity``)."""

from __future__ import annotations

import bisect
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse


class RelatedIndex:
    """Scores papers by the entities they share; rarer shared entities weigh more.

    score(p, q) = sum over shared e of idf(e)^2 / (|p| |q|), with idf(e) = ln(1 + N / df(e)) and |p| the
    Euclidean norm of p's idf vector: the cosine of binary TF-IDF vectors. The paper-entity matrix is sparse,
    so scoring one paper walks only the postings of its own entities (a sparse row times the matrix), never
    all N papers. Postings longer than ``max_df`` (20 % of the papers, at least 50 and at most 1,000: entities
    that common separate little) are left out of that walk, which bounds the cost per paper by
    |p| * max_df.

    The index is held as the paper-entity incidence matrix in CSR form (``papers``, ``entities``, ``indptr``,
    ``indices``), which is what the embedded store's snapshot persists, so a served store does not rebuild it.
    """

    def __init__(self, paper_entities: Mapping[str, Iterable[str]], *, max_df_ratio: float = 0.2,
                 min_max_df: int = 50, max_max_df: int = 1000) -> None:
        papers = sorted(paper_entities)
        rows = [sorted(set(paper_entities[p])) for p in papers]
        entities = sorted({e for es in rows for e in es})
        col = {e: j for j, e in enumerate(entities)}
        indptr = np.zeros(len(papers) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(es) for es in rows])
        indices = np.fromiter((col[e] for es in rows for e in es), dtype=np.int32, count=int(indptr[-1]))
        self._setup(papers, entities, indptr, indices, max_df_ratio, min_max_df, max_max_df)

    @classmethod
    def from_csr(cls, papers: Sequence[str], entities: Sequence[str], indptr: np.ndarray, indices: np.ndarray, *,
                 max_df_ratio: float = 0.2, min_max_df: int = 50, max_max_df: int = 1000) -> RelatedIndex:
        """The index over a stored incidence matrix: rows are ``papers`` (sorted), columns ``entities`` (sorted),
        each row's column indices ascending."""
        self = cls.__new__(cls)
        self._setup(list(papers), list(entities), indptr, indices, max_df_ratio, min_max_df, max_max_df)
        return self

    def _setup(self, papers: list[str], entities: list[str], indptr: np.ndarray, indices: np.ndarray,
               max_df_ratio: float, min_max_df: int, max_max_df: int) -> None:
        self.papers, self.entities = papers, entities
        self.indptr, self.indices = indptr, indices
        self.row = {p: i for i, p in enumerate(papers)}
        df = np.bincount(indices, minlength=len(entities))
        self.df = df
        n = max(1, len(papers))
        log = math.log
        self.idf = np.array([log(1.0 + n / c) for c in df.tolist()], dtype=np.float64)
        self.max_df = max(min_max_df, min(max_max_df, int(max_df_ratio * n)))
        x = sparse.csr_matrix((self.idf[indices], indices, indptr), shape=(len(papers), len(entities)))
        self.norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        self.norm[self.norm == 0] = 1.0
        keep = (df <= self.max_df).astype(np.float64)
        xc = x @ sparse.diags(keep)
        self._x = xc.tocsr()
        self._xt = xc.T.tocsr()

    def entities_of(self, paper_id: str) -> list[str]:
        """The paper's entity ids, sorted."""
        i = self.row[paper_id]
        return [self.entities[j] for j in self.indices[self.indptr[i] : self.indptr[i + 1]].tolist()]

    def papers_with(self, entity_id: str, paper_ids: Iterable[str]) -> set[str]:
        """Those of ``paper_ids`` whose row holds ``entity_id`` (a binary search in each sorted row)."""
        j = bisect.bisect_left(self.entities, entity_id)
        if j == len(self.entities) or self.entities[j] != entity_id:
            return set()
        out = set()
        for p in paper_ids:
            i = self.row.get(p)
            if i is not None:
                lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
                at = lo + int(np.searchsorted(self.indices[lo:hi], j))
                if at < hi and self.indices[at] == j:
                    out.add(p)
        return out

    def shared(self, p: str, q: str) -> list[str]:
        """The entities ``p`` and ``q`` share, rarest (highest IDF) first."""
        i, j = self.row.get(p), self.row.get(q)
        if i is None or j is None:
            return []
        a = self.indices[self.indptr[i] : self.indptr[i + 1]]
        b = self.indices[self.indptr[j] : self.indptr[j + 1]]
        cols = np.intersect1d(a, b, assume_unique=True).tolist()
        return [self.entities[c] for c in sorted(cols, key=lambda c: (-self.idf[c], self.entities[c]))]

    def _top(self, i: int, scores: np.ndarray, idx: np.ndarray, k: int) -> list[tuple[str, float, list[str]]]:
        mask = idx != i
        idx, scores = idx[mask], scores[mask]
        if not len(idx) or k <= 0:
            return []
        scores = scores / (self.norm[i] * self.norm[idx])
        if len(idx) > k:
            cut = np.partition(scores, len(scores) - k)[len(scores) - k]
            sel = scores >= cut  # ties at the cut are all kept, then ordered by id below
            idx, scores = idx[sel], scores[sel]
        order = np.lexsort((idx, -scores))[:k]  # best first; equal scores by paper id (rows are id-sorted)
        indptr, indices, idf, entities = self.indptr, self.indices, self.idf, self.entities
        mine = set(indices[indptr[i] : indptr[i + 1]].tolist())
        out = []
        for j in order:
            q = int(idx[j])
            cols = [c for c in indices[indptr[q] : indptr[q + 1]].tolist() if c in mine]
            shared = sorted(cols, key=lambda c: (-idf[c], entities[c]))
            out.append((self.papers[q], round(float(scores[j]), 6), [entities[c] for c in shared]))
        return out

    def related(self, paper_id: str, k: int = 10) -> list[tuple[str, float, list[str]]]:
        """Top ``k`` papers as (paper id, score, shared entity ids by weight), best first, ties by id."""
        i = self.row.get(paper_id)
        if i is None:
            return []
        r = (self._x[i] @ self._xt).tocsr()
        return self._top(i, r.data, r.indices, k)

    def all_related(self, k: int = 10, block: int = 512) -> Iterator[tuple[str, list[tuple[str, float, list[str]]]]]:
        """Every paper's top ``k``, computed a block of rows at a time (one sparse product per block)."""
        for start in range(0, len(self.papers), block):
            prod = (self._x[start : start + block] @ self._xt).tocsr()
            for off in range(prod.shape[0]):
                lo, hi = prod.indptr[off], prod.indptr[off + 1]
                yield self.papers[start + off], self._top(start + off, prod.data[lo:hi], prod.indices[lo:hi], k)


# -- text: what the abstracts say ---------------------------------------------------------------------------------

TOP_TERMS = 96  # terms kept per abstract in its TF-IDF row
HASH_SLOTS = 1 << 22  # columns for words, and as many for word pairs
_WORD = re.compile(r"[a-z][a-z0-9]*(?:[-'][a-z0-9]+)*|[0-9]+[a-z][a-z0-9]*")
_STOP = """
a about above after again against all also although am among an and any approach approaches are as at based be
because been before being below between both but by can could did do does doing done down during each either
et etc few for from further had has have having here hers herself him himself his how however i if in into is
it its itself just may me method methods might more most much must my myself new no nor not novel now of off
on once only or other our ours ourselves out over own paper per present presents propose proposed result
results same she should show shown shows so some study such than that the their theirs them themselves then
there these they this those through thus to too under until up upon us use used using very via was we were
what when where which while who whom why will with within without work would yet you your yours yourself
yourselves
"""
STOPWORDS = frozenset(_STOP.split())


def words(text: str) -> list[str]:
    """The lexical tokens of a text: lower-cased words of two or more characters, stop words left out."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS]


def term_columns(text: str) -> tuple[list[int], list[int]]:
    """The hashed columns of a text's words (``words``) and of each pair of neighbouring words ("offline rl"):
    CRC-32 into ``HASH_SLOTS`` columns each (pairs after the words), the same on every machine and in every
    process, with no vocabulary to hold (83k abstracts have millions of distinct pairs)."""
    w = words(text)
    crc = zlib.crc32
    return ([crc(x.encode()) % HASH_SLOTS for x in w],
            [HASH_SLOTS + crc(f"{a} {b}".encode()) % HASH_SLOTS for a, b in zip(w, w[1:], strict=False)])


class TfidfBuilder:
    """``tfidf_rows`` one text at a time: each text's term counts are kept as two small arrays (no text, no
    vocabulary), so a build streams 83k abstracts through it."""

    def __init__(self, top: int = TOP_TERMS) -> None:
        self.top = top
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []
        self.df = np.zeros(2 * HASH_SLOTS, dtype=np.int32)

    def add(self, text: str) -> None:
        uni, pairs = term_columns(text)
        c = Counter(uni)
        c.update(pairs)
        cols = np.fromiter(c, dtype=np.int32, count=len(c))
        self.df[cols] += 1
        self.rows.append((cols, np.fromiter(c.values(), dtype=np.float32, count=len(c))))

    def finish(self) -> sparse.csr_matrix:
        n, top, df = len(self.rows), self.top, self.df
        indptr = np.zeros(n + 1, dtype=np.int64)
        indices, data = [], []
        for r, (cols, tf) in enumerate(self.rows):
            d = df[cols]
            ok = (cols < HASH_SLOTS) | (d >= 2)
            cols = cols[ok]
            w = (1.0 + np.log(tf[ok].astype(np.float64))) * (np.log((1.0 + n) / (1.0 + d[ok])) + 1.0)
            if len(cols) > top:
                sel = np.lexsort((cols, -w))[:top]
                cols, w = cols[sel], w[sel]
            if len(cols):
                order = np.argsort(cols)
                indices.append(cols[order])
                w = w[order]
                data.append((w / np.sqrt((w * w).sum())).astype(np.float16))
            indptr[r + 1] = indptr[r] + len(cols)
        self.rows = []
        ind = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
        val = np.concatenate(data).astype(np.float32) if data else np.zeros(0, dtype=np.float32)
        return sparse.csr_matrix((val, ind, indptr), shape=(n, 2 * HASH_SLOTS))


def tfidf_rows(texts: Sequence[str], *, top: int = TOP_TERMS) -> sparse.csr_matrix:
    """Sublinear TF-IDF rows over words and word pairs (1 + ln tf, smooth idf ln((1 + N) / (1 + df)) + 1), each
    L2-normalised: the usual reference for document similarity, with pairs for the specificity of a phrase
    ("federated learning" says more than "federated" and "learning"). A pair in one text only is dropped, and
    each row keeps its ``top`` heaviest terms (they hold nearly all of a cosine, and the matrix stays small at
    83k abstracts). Weights are rounded to float16, as stored, so every store computes the same scores."""
    b = TfidfBuilder(top)
    for t in texts:
        b.add(t)
    return b.finish()


@dataclass(frozen=True, slots=True)
class Weights:
    """How related-paper scores combine the three signals (chosen on bench/related.py's tuning slice)."""

    dense: float = 0.5  # cosine of the papers' embeddings (kg.embed)
    lexical: float = 1.0  # cosine of their TF-IDF vectors
    entities: float = 0.25  # IDF-weighted cosine of their entity sets (RelatedIndex)
    max_df: float = 0.05  # terms in more of the papers than this share take no part in the lexical walk


DEFAULT_WEIGHTS = Weights()


class TextIndex:
    """Each paper's embedding (``dense``, unit rows) and TF-IDF vector (``lexical``), rows in ``papers`` order."""

    def __init__(self, papers: Sequence[str], dense: np.ndarray, lexical: sparse.csr_matrix, *,
                 max_df: float = DEFAULT_WEIGHTS.max_df, embedder: str = "") -> None:
        self.embedder = embedder
        self.papers = list(papers)
        self.row = {p: i for i, p in enumerate(self.papers)}
        self.dense = np.ascontiguousarray(dense, dtype=np.float32)
        self.lexical = lexical
        n = max(1, len(self.papers))
        df = np.bincount(lexical.indices, minlength=lexical.shape[1])
        keep = (df <= max(50, int(max_df * n))).astype(np.float32)
        self._keep = keep
        self._lt: sparse.csr_matrix | None = None

    def _walk(self) -> sparse.csr_matrix:
        """The TF-IDF rows transposed, terms in more than ``max_df`` of the papers left out: what a paper's row
        is multiplied with (made on first use, and dropped by ``release``)."""
        if self._lt is None:
            self._lt = (self.lexical @ sparse.diags(self._keep)).T.tocsr()
        return self._lt

    def release(self) -> None:
        """Drop what scoring made (a build keeps the index only to save it)."""
        self._lt = None

    def scores(self, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
        """Dense and lexical cosines of ``rows`` against every paper: two arrays of shape (len(rows), N)."""
        d = self.dense[rows] @ self.dense.T
        lex = (self.lexical[rows] @ self._walk()).toarray()
        return d, lex.astype(np.float32)


class PaperSimilarity:
    """Related papers by what the abstracts say and by the specific things they share.

    score(p, q) = w_dense cos(emb p, emb q) + w_lexical cos(tfidf p, tfidf q) + w_entities ent(p, q), with
    ``ent`` the IDF-weighted entity cosine of ``RelatedIndex`` (a shared GSM8K weighs far more than a shared
    accuracy). Papers scoring 0 or less are never related; the embeddings are centred, so unrelated abstracts
    score about 0 and any paper with a like-minded one in the corpus gets neighbours. One paper's scores are
    a product of its row with every paper's (about 10 ms at 83k papers).
    """

    def __init__(self, entities: RelatedIndex, text: TextIndex, weights: Weights = DEFAULT_WEIGHTS) -> None:
        self.entities, self.text, self.weights = entities, text, weights
        self.papers = text.papers
        # entity columns per text row (papers without entities have none)
        self._erow = np.array([entities.row.get(p, -1) for p in self.papers], dtype=np.int64)
        ex = entities._x  # noqa: SLF001 - the entity index's pruned IDF rows, same module
        rows = self._erow.clip(min=0)
        em = ex[rows].multiply((self._erow >= 0)[:, None].astype(np.float64)).tocsr()
        norm = entities.norm[rows]
        self._ex = (sparse.diags(1.0 / norm) @ em).tocsr()
        self._ext = self._ex.T.tocsr()

    def specific(self, shared: Sequence[str]) -> list[str]:
        """Those of ``shared`` specific enough to say why two papers are related: in at most 2 % of the papers
        (at least 5), so a shared accuracy or deep learning is no reason where GSM8K is."""
        e = self.entities
        cut = max(5, int(0.02 * len(e.papers)))
        return [name for name in shared if e.df[bisect.bisect_left(e.entities, name)] <= cut]

    def _combined(self, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        d, lex = self.text.scores(rows)
        ent = (self._ex[rows] @ self._ext).toarray().astype(np.float32)
        w = self.weights
        return w.dense * d + w.lexical * lex + w.entities * ent, d, lex, ent

    def _top(self, i: int, total: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` best rows for row ``i`` (itself left out), best first, equal scores by paper id (rows are
        id-sorted); only papers that score above 0: a paper nothing in the corpus resembles gets none."""
        if k <= 0:
            return np.empty(0, dtype=np.int64)
        total = total.copy()
        total[i] = -np.inf
        if k < len(total):
            cut = np.partition(total, len(total) - k)[len(total) - k]
            cand = np.flatnonzero(total >= cut)  # every tie at the cut, then ordered by id below
        else:
            cand = np.arange(len(total))
        cand = cand[total[cand] > 0]
        order = np.lexsort((cand, -total[cand]))
        return cand[order][:k]

    def related(self, paper_id: str, k: int = 10) -> list[tuple[str, float, float, float, list[str]]]:
        """Top ``k`` as (paper id, score, dense cosine, lexical cosine, shared entity ids rarest first)."""
        i = self.text.row.get(paper_id)
        if i is None:
            return []
        total, d, lex, _ = self._combined(np.array([i]))
        return self._rows(i, total[0], d[0], lex[0], k)

    def _rows(self, i: int, total: np.ndarray, d: np.ndarray, lex: np.ndarray, k: int
              ) -> list[tuple[str, float, float, float, list[str]]]:
        out = []
        me = self.papers[i]
        for q in self._top(i, total, k).tolist():
            out.append((self.papers[q], round(float(total[q]), 6), round(float(d[q]), 4), round(float(lex[q]), 4),
                        self.entities.shared(me, self.papers[q])))
        return out

    def all_related(self, k: int = 10, block: int = 64
                    ) -> Iterator[tuple[str, list[tuple[str, float, float, float, list[str]]]]]:
        """Every paper's top ``k``, a block of rows at a time."""
        for start in range(0, len(self.papers), block):
            rows = np.arange(start, min(len(self.papers), start + block))
            total, d, lex, _ = self._combined(rows)
            for off, i in enumerate(rows.tolist()):
                yield self.papers[i], self._rows(i, total[off], d[off], lex[off], k)
