"""Search by meaning: papers ranked by a fusion of BM25 (``kg.fulltext``) and embedding similarity (``kg.embed``),
each with the sentence of its abstract that answers the query best.

BM25 requires the query's words; the embedding finds an abstract that says the same thing in other words
("contrastive learning for speech" for "self-supervised audio representations"). The two rankings are fused by
reciprocal rank (RRF, Cormack et al. 2009: sum of 1 / (60 + rank)), which needs no calibration between BM25
scores and cosines, with the embedding's list cut at a similarity floor so that a query about nothing in the
corpus does not return its nearest unrelated papers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kg.embed import default_embedder
from kg.related import TextIndex, words

RRF_K = 60
DENSE_DEPTH = 100  # nearest papers by embedding taken into the fusion
DENSE_FLOOR = 0.12  # below this cosine (centred embeddings: unrelated pairs sit near 0), no match by meaning
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\\(\[\"'])")


def dense_matches(text: TextIndex, query: str, depth: int = DENSE_DEPTH) -> list[tuple[str, float]]:
    """Papers by the cosine of their embedding with the query's, best first, down to ``DENSE_FLOOR``."""
    if not text.papers:
        return []
    qv = query_vector(query)
    if not qv.any():
        return []
    sims = text.dense @ qv
    k = min(depth, len(sims))
    top = np.argpartition(-sims, k - 1)[:k]
    top = top[np.lexsort((top, -sims[top]))]
    return [(text.papers[i], float(sims[i])) for i in top.tolist() if sims[i] >= DENSE_FLOOR]


def fuse(bm25: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of two rankings, best first, scaled so the best scores 1; ties by id."""
    score: dict[str, float] = {}
    for ranking in (bm25, dense):
        for r, (pid, _) in enumerate(ranking):
            score[pid] = score.get(pid, 0.0) + 1.0 / (RRF_K + r + 1)
    if not score:
        return []
    best = max(score.values())
    return sorted(((p, round(s / best, 6)) for p, s in score.items()), key=lambda x: (-x[1], x[0]))


def sentences(abstract: str) -> list[str]:
    return [s for s in _SENTENCE.split(abstract.strip()) if s]


@lru_cache(maxsize=256)
def query_vector(query: str) -> np.ndarray:
    """The query's embedding (cached: a search embeds its query once, whatever it then compares it with)."""
    v = default_embedder().embed([query])[0]
    v.setflags(write=False)
    return v


def best_sentence(query: str, abstract: str) -> str:
    """The sentence of ``abstract`` closest to ``query``: embedding cosine, plus the share of the query's words
    it holds (so an exact phrase wins among sentences alike in meaning)."""
    return best_sentences(query, [abstract])[0]


def best_sentences(query: str, abstracts: Sequence[str]) -> list[str]:
    """``best_sentence`` of each abstract, every sentence embedded in one call."""
    split = [sentences(a) for a in abstracts]
    flat = [s for ss in split if len(ss) > 1 for s in ss]
    if not flat:  # no abstract has two sentences to choose between: nothing to embed
        return [ss[0] if ss else "" for ss in split]
    sv = default_embedder().embed(flat)
    qv = query_vector(query)
    qw = set(words(query))
    out, at = [], 0
    for ss in split:
        if len(ss) <= 1:
            out.append(ss[0] if ss else "")
            continue
        overlap = np.array([len(qw & set(words(s))) / len(qw) if qw else 0.0 for s in ss])
        out.append(ss[int(np.argmax(sv[at : at + len(ss)] @ qv + 0.5 * overlap))])
        at += len(ss)
    return out
