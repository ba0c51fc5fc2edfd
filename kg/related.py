"""Related papers without comparing every pair: an inverted index from entities to papers, IDF-weighted cosine."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence

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
