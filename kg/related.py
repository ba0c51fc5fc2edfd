"""Related papers without comparing every pair: an inverted index from entities to papers, IDF-weighted cosine."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

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
    """

    def __init__(self, paper_entities: Mapping[str, Iterable[str]], *, max_df_ratio: float = 0.2,
                 min_max_df: int = 50, max_max_df: int = 1000) -> None:
        self.papers = sorted(paper_entities)
        self.row = {p: i for i, p in enumerate(self.papers)}
        self.paper_entities = {p: tuple(sorted(set(paper_entities[p]))) for p in self.papers}
        df = Counter(e for es in self.paper_entities.values() for e in es)
        self.entities = sorted(df)
        col = {e: j for j, e in enumerate(self.entities)}
        n = max(1, len(self.papers))
        self.idf = {e: math.log(1.0 + n / c) for e, c in df.items()}
        self.max_df = max(min_max_df, min(max_max_df, int(max_df_ratio * n)))
        rows, cols, vals = [], [], []
        for i, p in enumerate(self.papers):
            for e in self.paper_entities[p]:
                rows.append(i)
                cols.append(col[e])
                vals.append(self.idf[e])
        x = sparse.csr_matrix((np.array(vals, dtype=np.float64), (rows, cols)), shape=(len(self.papers),
                                                                                        len(self.entities)))
        self.norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        self.norm[self.norm == 0] = 1.0
        keep = np.array([df[e] <= self.max_df for e in self.entities], dtype=bool)
        xc = x @ sparse.diags(keep.astype(np.float64))
        self._x = xc.tocsr()
        self._xt = xc.T.tocsr()

    def _top(self, i: int, scores: np.ndarray, idx: np.ndarray, k: int) -> list[tuple[str, float, list[str]]]:
        mask = idx != i
        idx, scores = idx[mask], scores[mask]
        if not len(idx):
            return []
        scores = scores / (self.norm[i] * self.norm[idx])
        if len(idx) > k:
            cut = np.partition(scores, len(scores) - k)[len(scores) - k]
            sel = scores >= cut  # ties at the cut are all kept, then ordered by id below
            idx, scores = idx[sel], scores[sel]
        order = np.lexsort((idx, -scores))[:k]  # best first; equal scores by paper id (rows are id-sorted)
        mine = set(self.paper_entities[self.papers[i]])
        out = []
        for j in order:
            q = self.papers[idx[j]]
            shared = sorted((e for e in self.paper_entities[q] if e in mine), key=lambda e: (-self.idf[e], e))
            out.append((q, round(float(scores[j]), 6), shared))
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
