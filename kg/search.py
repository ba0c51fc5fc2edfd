"""Search indexes: which entities can match a query, found without scoring them all (papers: ``kg.fulltext``).

The scoring rules live in the store (``NxReads._match_entity``); these indexes only
narrow the candidates and never drop one the rules would score:

- A name matches exactly, by prefix or at a word start exactly when ``" " + query`` occurs in
  ``" " + name``. All names are joined into one string, so that is one fast substring scan, and the match
  positions map back to names by binary search.
- A fuzzy match (``difflib`` ratio r >= 0.8, lengths within 3) implies shared character bigrams: with M
  matched characters in b blocks, 2M >= 0.8 (la + lb) and b - 1 <= la + lb - 2M, so the blocks hold at least
  M - b >= 0.2 (la + lb) - 1 bigrams found in both strings. The query's bigrams are counted in every name
  through an inverted index (sorted bigram codes, built with numpy) and only names that clear the bound
  reach ``difflib``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

import numpy as np

from kg.lru import LRUCache

_SEP = "\x00"
# Recent lookups (needle -> row positions) kept per index, counted in rows: common words recur across queries,
# and one common word can match most of 83k papers.
ROW_BUDGET = 4_000_000


class JoinedText:
    """Many strings joined by a separator, for finding which of them contain a substring.

    Held as UTF-8 bytes: a few abstracts with characters outside Latin-1 would make a Python string four bytes
    per character, and every scan reads the whole text. A UTF-8 needle only matches at character boundaries,
    so byte matches are exactly string matches.
    """

    def __init__(self, texts: Sequence[str], prefix: str = "") -> None:
        parts = [(prefix + t.replace(_SEP, " ")).encode("utf-8", "surrogatepass") for t in texts]
        self.text = _SEP.encode().join(parts)
        self.starts: list[int] = []
        at = 0
        for b in parts:
            self.starts.append(at)
            at += len(b) + 1
        self._cache = LRUCache(ROW_BUDGET)

    def rows_containing(self, needle: str) -> np.ndarray:
        """Ascending positions of the strings that contain ``needle``."""
        if not needle or _SEP in needle:
            return np.zeros(0, dtype=np.int32)
        hit = self._cache.get(needle)
        if hit is None:
            rows = self._scan(needle.encode("utf-8", "surrogatepass"))
            hit = self._cache.put(needle, rows, len(rows))
        return hit

    def _scan(self, needle: bytes) -> np.ndarray:
        # Find the first occurrence, then jump to the next string: the loop runs once per matching string,
        # not once per occurrence (a word like "the" occurs a million times in 83k abstracts).
        starts, find = self.starts, self.text.find
        n = len(starts)
        rows: list[int] = []
        at = find(needle)
        while at >= 0:
            row = bisect.bisect_right(starts, at) - 1
            rows.append(row)
            if row + 1 >= n:
                break
            at = find(needle, starts[row + 1])
        return np.asarray(rows, dtype=np.int32)


class NameIndex:
    """Candidate entities for a canonical query key, by the rules in the module docstring."""

    def __init__(self, entity_keys: Sequence[Sequence[str]]) -> None:
        owner: list[int] = []
        keys: list[str] = []
        for e, ks in enumerate(entity_keys):
            for k in dict.fromkeys(ks):
                keys.append(k)
                owner.append(e)
        self.owner = np.asarray(owner, dtype=np.int64)
        self.lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        self.max_length = int(self.lengths.max()) if len(keys) else 0
        self.joined = JoinedText(keys, prefix=" ")
        # Bigram codes of every name, from the code points of all names joined: pairs inside one name only.
        text = _SEP.join(" " + k for k in keys)
        starts = np.zeros(len(keys), dtype=np.int64)
        np.cumsum(self.lengths[:-1] + 2, out=starts[1:])
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        sep = ord(_SEP)
        pair = codes[:-1] * 0x110000 + codes[1:]
        ok = (codes[:-1] != sep) & (codes[1:] != sep)
        ok[starts[starts < len(ok)]] = False  # the " " prefix is not part of the name (an empty last name: none)
        at = np.nonzero(ok)[0]
        key_of = np.searchsorted(starts, at, side="right") - 1
        order = np.argsort(pair[at], kind="stable")
        self.gram_codes = pair[at][order]
        self.gram_keys = key_of[order]

    def _gram_counts(self, q: str) -> np.ndarray:
        """For each name, the bigrams it shares with ``q``, counted as a multiset intersection."""
        counts = np.zeros(len(self.lengths), dtype=np.int64)
        if len(q) > self.max_length + 3:  # no name is near enough in length to match fuzzily
            return counts
        for g, cq in Counter(q[i : i + 2] for i in range(len(q) - 1)).items():
            code = ord(g[0]) * 0x110000 + ord(g[1])
            lo, hi = np.searchsorted(self.gram_codes, [code, code + 1])
            if hi > lo:
                counts += np.minimum(np.bincount(self.gram_keys[lo:hi], minlength=len(counts)), cq)
        return counts

    def candidates(self, qk: str) -> set[int]:
        """Entity positions whose names may match ``qk`` exactly, by prefix, at a word start or fuzzily."""
        found = self.joined.rows_containing(" " + qk)
        if len(qk) >= 4:
            la = len(qk)
            near = np.abs(self.lengths - la) <= 3
            need = 0.2 * (la + self.lengths) - 1.0
            fuzzy = np.nonzero(near & (self._gram_counts(qk) >= need - 1e-9))[0]
            found = np.concatenate([found, fuzzy])
        return set(self.owner[found].tolist())
