"""A second look at each entity span: is it an entity at all, and of which type (spans.json, by train_gold.py).

The NER decides from a window of tokens; this classifier sees the whole span and its neighbours: its words, its
head word and that word's ending, the shapes of its first and last tokens, its length, the two words before and
after. A multinomial logistic regression over the six types and ``none``, trained on kg-gold train: the gold
mentions (their type), the trained NER's spans and the noun chunks on train (``none`` unless they are a gold
name). It does not see the NER's label, which on train is nearly always right and would teach it nothing; so
it overrides the NER only when sure: a span goes when P(none) > DROP, and takes the classifier's type when that
type's probability is at least RETYPE. Both chosen on kg-gold dev. Plain JSON weights, like the relation model.
"""

from __future__ import annotations

import re
from typing import Any

from kg.extract.linear import LinearModel

NONE = "none"
_UPPER, _LOWER, _DIGIT = re.compile(r"[A-Z]+"), re.compile(r"[a-z]+"), re.compile(r"[0-9]+")


def _shape(w: str) -> str:
    return _DIGIT.sub("0", _LOWER.sub("a", _UPPER.sub("A", w)))[:6]


def span_features(doc: Any, start: int, end: int) -> list[str]:
    """Features of the span at character offsets [start, end) of ``doc``."""
    sp = doc.char_span(start, end, alignment_mode="expand")
    if sp is None or not len(sp):
        return []
    toks = list(sp)
    words = [t.lower_ for t in toks]
    n = len(doc)
    pre = doc[sp.start - 1].lower_ if sp.start > 0 else "<s>"
    pre2 = doc[sp.start - 2].lower_ if sp.start > 1 else "<s>"
    nxt = doc[sp.end].lower_ if sp.end < n else "</s>"
    nxt2 = doc[sp.end + 1].lower_ if sp.end + 1 < n else "</s>"
    return [*(f"W={w}" for w in words), f"H={words[-1]}", f"H3={words[-1][-3:]}", f"F={words[0]}",
            f"S0={_shape(toks[0].text)}", f"SH={_shape(toks[-1].text)}", f"L={min(len(toks), 5)}",
            f"K={' '.join(words)}", f"HP={toks[-1].pos_}", f"P1={pre}", f"P2={pre2}", f"N1={nxt}", f"N2={nxt2}",
            f"HN={words[-1]}|{nxt}"]


class SpanFilter(LinearModel):
    """Loaded JSON weights: {"labels", "bias", "weights": {feature: [..per label..]}, "drop", "retype"}."""

    NONE = NONE

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.drop: float = data.get("drop", 0.6)
        self.retype: float | None = data.get("retype", 0.4)  # None: never retype, only drop

    def judge(self, p: list[float], label: str) -> str | None:
        """The type given the classifier's probabilities ``p`` (``label`` unless it is sure of another), or None
        to drop the span."""
        if p[self._none] > self.drop:
            return None
        if self.retype is None:
            return label
        best = max((k for k in range(len(p)) if k != self._none), key=p.__getitem__)
        return self.labels[best] if p[best] >= self.retype else label

    def apply(self, doc: Any, spans: list[Any], keys: list[str]) -> list[Any]:
        """The spans (objects with start, end, type) kept, retyped; one decision per name (``keys[i]``) in the
        document, on its mentions' mean probabilities, so that a name keeps one type."""
        by_key: dict[str, list[list[float]]] = {}
        for c, k in zip(spans, keys, strict=True):
            feats = span_features(doc, c.start, c.end)
            if feats:
                by_key.setdefault(k, []).append(self.probs(feats))
        decided: dict[str, str | None] = {}
        keep = []
        for c, k in zip(spans, keys, strict=True):
            if k not in by_key:
                keep.append(c)
                continue
            if k not in decided:
                ps = by_key[k]
                decided[k] = self.judge([sum(col) / len(ps) for col in zip(*ps, strict=True)], c.type)
            if decided[k] is not None:
                c.type = decided[k]
                keep.append(c)
        return keep
