"""Search indexes: which entities can match a query, found without scoring them all (papers: ``kg.fulltext``).

The scoring rules live in the store (``NxReads._match_entity``); these indexes only
narrow the candidates and never drop one the rules would score:

- A name matches exactly, by prefix or at a word start exactly when ``" " + query`` occurs in
  ``" " + name``. All names are joined into one string, so that is one fast substring scan, and the match
  positions map back to names by binary search.
- A fuzzy match (``difflib`` ratio r >= 0.8, lengths within 3) implies shared character bigrams: with M
  matched characters in b blocks, 2M >= 0.8 (la + lb) and b - 1 <= la + lb - 2M, so the blocks hold at least
  M - b >= 0.2 (la + lb) - 1 bigrams found in both strings. The query's bigrams are counted in every name of a
  near length through an inverted index (sorted bigram codes, built with numpy; names numbered by length, so
  the near lengths are one range). Names that clear that bound must also pass difflib's ``quick_ratio`` (the
  shared characters as multisets, 2I >= 0.8 (la + lb), which bounds the ratio from above), counted for all of
  them at once; then, per name, the longest common subsequence L must give 2L >= 0.8 (la + lb) (difflib's
  matching blocks are a common subsequence, so its M <= L), computed bit-parallel (``lcs_length``); only the
  rest reach ``difflib``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kg.lru import LRUCache

_SEP = "\x00"
# Recent lookups (needle -> row positions) kept per index, counted in rows: common words recur across queries,
# and one common word can match most of 83k papers.
ROW_BUDGET = 4_000_000


@lru_cache(maxsize=256)
def _char_masks(a: str) -> dict[str, int]:
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    return masks


def lcs_length(a: str, b: str) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``, bit-parallel over ``a``'s characters
    (Hyyrö 2004: one step of a few integer operations per character of ``b``)."""
    masks, full = _char_masks(a), (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


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
        return self.rows_and_starts(needle)[0]

    def rows_and_starts(self, needle: str) -> tuple[np.ndarray, np.ndarray]:
        """``rows_containing(needle)``, and for each of those strings whether it starts with ``needle``."""
        if not needle or _SEP in needle:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=bool)
        hit = self._cache.get(needle)
        if hit is None:
            found = self._scan(needle.encode("utf-8", "surrogatepass"))
            hit = self._cache.put(needle, found, len(found[0]))
        rows: np.ndarray = hit[0]
        return rows, hit[1]

    def _scan(self, needle: bytes) -> tuple[np.ndarray, np.ndarray]:
        # Find the first occurrence, then jump to the next string: the loop runs once per matching string,
        # not once per occurrence (a word like "the" occurs a million times in 83k abstracts).
        starts, find = self.starts, self.text.find
        n = len(starts)
        rows: list[int] = []
        first: list[bool] = []  # the first occurrence in a string is at its start exactly when it starts so
        at = find(needle)
        while at >= 0:
            row = bisect.bisect_right(starts, at) - 1
            rows.append(row)
            first.append(at == starts[row])
            if row + 1 >= n:
                break
            at = find(needle, starts[row + 1])
        return np.asarray(rows, dtype=np.int32), np.asarray(first, dtype=bool)


class NameIndex:
    """Candidate entities for a canonical query key, by the rules in the module docstring."""

    def __init__(self, entity_keys: Sequence[Sequence[str]]) -> None:
        owner: list[int] = []
        keys: list[str] = []
        for e, ks in enumerate(entity_keys):
            for k in dict.fromkeys(ks):
                keys.append(k)
                owner.append(e)
        # Names numbered shortest first: the names near a query's length are then one range of rows.
        order = sorted(range(len(keys)), key=lambda i: len(keys[i]))
        keys = [keys[i] for i in order]
        self.owner = np.asarray([owner[i] for i in order], dtype=np.int64)
        self.paper_counts = np.zeros(len(entity_keys))  # per entity, set by the store: search ranks by it
        self.lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        self.max_length = int(self.lengths.max()) if len(keys) else 0
        self.joined = JoinedText(keys, prefix=" ")
        self._starts = np.asarray(self.joined.starts, dtype=np.int64) + 1  # each name's first byte (after " ")
        ends = np.append(self._starts[1:] - 2, len(self.joined.text))
        self._ascii = (ends - self._starts) == self.lengths  # bytes are characters: the quick_ratio count applies
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
        order_ = np.argsort(pair[at], kind="stable")  # stable: each bigram's names stay in row order
        grams = pair[at][order_]
        # As CSR: each distinct bigram once, then its names' rows (int32): 4 bytes per bigram of every name,
        # not 16, which at 83k papers (a million names) is a few hundred MB.
        self.gram_codes, first = np.unique(grams, return_index=True)
        self.gram_ptr = np.append(first, len(grams)).astype(np.int64)
        self.gram_keys = key_of[order_].astype(np.int32)

    def _near(self, la: int) -> tuple[int, int]:
        """The rows of the names whose length is within 3 of ``la``."""
        lo, hi = np.searchsorted(self.lengths, [la - 3, la + 4])
        return int(lo), int(hi)

    def _gram_counts(self, q: str, lo: int, hi: int) -> np.ndarray:
        """For each name in rows ``lo:hi``, at least the bigrams it shares with ``q`` (a multiset intersection):
        each of the query's bigrams counted once per occurrence in the name, in one pass over all their postings
        (a name holding a bigram more often than the query is counted high, which only keeps a candidate)."""
        parts = []
        for g in set(q[i : i + 2] for i in range(len(q) - 1)):
            code = ord(g[0]) * 0x110000 + ord(g[1])
            i = int(np.searchsorted(self.gram_codes, code))
            if i == len(self.gram_codes) or self.gram_codes[i] != code:
                continue
            rows = self.gram_keys[self.gram_ptr[i] : self.gram_ptr[i + 1]]
            c, d = np.searchsorted(rows, [lo, hi])
            parts.append(rows[c:d])
        if not parts:
            return np.zeros(hi - lo, dtype=np.int64)
        return np.bincount(np.concatenate(parts) - lo, minlength=hi - lo)

    def _quick_ratio_ok(self, q: str, rows: np.ndarray) -> np.ndarray:
        """Whether difflib's ``quick_ratio`` of ``q`` and each name in ``rows`` reaches 0.8; True where it is not
        counted here (a name or a query beyond ASCII)."""
        if not rows.size or not q.isascii():
            return np.ones(len(rows), dtype=bool)
        lengths = self.lengths[rows]
        flat = np.repeat(self._starts[rows] - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        chars = np.frombuffer(self.joined.text, dtype=np.uint8)[flat]
        name_of = np.repeat(np.arange(len(rows)), lengths)
        shared = np.zeros(len(rows), dtype=np.int64)
        for ch, cq in Counter(q.encode()).items():
            shared += np.minimum(np.bincount(name_of[chars == ch], minlength=len(rows)), cq)
        # difflib computes 2.0 * matches / (la + lb); the same float expression here, with a hair of slack.
        return ~self._ascii[rows] | (2.0 * shared / (len(q) + lengths) >= 0.8 - 1e-9)

    def _rows(self, qk: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows of names matching ``qk`` at a word start, whether each starts with it, and rows that may match
        only fuzzily."""
        found, at_start = self.joined.rows_and_starts(" " + qk)
        fuzzy = np.zeros(0, dtype=np.int64)
        if len(qk) >= 4:
            la = len(qk)
            lo, hi = self._near(la)
            if hi > lo:
                need = 0.2 * (la + self.lengths[lo:hi]) - 1.0
                fuzzy = lo + np.nonzero(self._gram_counts(qk, lo, hi) >= need - 1e-9)[0]
                fuzzy = fuzzy[self._quick_ratio_ok(qk, fuzzy)]
        return found, at_start, fuzzy

    def candidates(self, qk: str) -> set[int]:
        """Entity positions whose names may match ``qk`` exactly, by prefix, at a word start or fuzzily."""
        found, _, fuzzy = self._rows(qk)
        return set(self.owner[np.concatenate([found, fuzzy])].tolist())

    def bounded(self, qk: str) -> tuple[np.ndarray, np.ndarray]:
        """``candidates(qk)`` as an array, with the most each entity's names can score (``NxReads._match_entity``):
        1.5 for a name equal to ``qk``, 0.8 for one starting with it, 0.6 at a word start, else 0.5 (fuzzy)."""
        found, at_start, fuzzy = self._rows(qk)
        exact = at_start & (self.lengths[found] == len(qk))
        best = np.where(exact, 1.5, np.where(at_start, 0.8, 0.6))
        owners = np.concatenate([self.owner[found], self.owner[fuzzy]])
        bound = np.concatenate([best, np.full(len(fuzzy), 0.5)])
        order = np.lexsort((-bound, owners))  # by entity, its highest bound first
        owners, bound = owners[order], bound[order]
        first = np.ones(len(owners), dtype=bool)
        first[1:] = owners[1:] != owners[:-1]
        return owners[first], bound[first]
