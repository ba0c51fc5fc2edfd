"""Which entities a paper proposes: a logistic regression over an entity's mentions (trained by train_gold.py).

Per distinct entity (canonical key) of an abstract, binary features of all its mentions: its type, name shape,
whether the lexicon knows it, where it first appears, how often, the words before each mention, the verb it
hangs from and that verb's subject ("we introduce X", "X is evaluated"), a naming word before it ("called X"),
an appositive after it ("X, a benchmark ..."), and whether the rule layer's "we propose ..." pattern picked it.
Shipped as plain JSON weights like the relation model (no scikit-learn at run time).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg.canon import canonical_key
from kg.extract.rules import NAMING_WORDS, PROPOSE_VERBS, is_name_token, known_type

_US = {"we", "our", "us", "this", "paper", "work", "study", "here", "i"}


def _bucket(n: int, edges: Sequence[int]) -> str:
    for e in edges:
        if n <= e:
            return str(e)
    return f">{edges[-1]}"


def entity_features(doc: Any, mentions: Sequence[tuple[int, int, str]], rule_flagged: set[int]) -> dict[str, set[str]]:
    """Features per canonical key; ``mentions`` are (start_char, end_char, type) in ``doc``, sorted by start."""
    sent_starts = [s.start for s in doc.sents]
    out: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    full = doc.text  # spaCy joins every token each time it is read: once per document
    for i, (s, e, ty) in enumerate(mentions):
        span = doc.char_span(s, e, alignment_mode="expand")
        if span is None or not len(span):
            continue
        text = full[s:e]
        key = canonical_key(text)
        f = out.setdefault(key, set())
        count[key] = count.get(key, 0) + 1
        if len(f) == 0:  # first mention
            sent_i = sum(1 for x in sent_starts if x <= span.start) - 1
            f |= {f"T={ty}", f"FS={_bucket(sent_i, (0, 1, 2, 4))}", f"LEN={_bucket(len(span), (1, 2, 3))}",
                  f"NAME={is_name_token(text.split()[0])}", f"KNOWN={known_type(key) or '-'}",
                  f"CAPS={any(c.isupper() for c in text[1:])}", f"DIGIT={any(c.isdigit() for c in text)}"}
        if i in rule_flagged:
            f.add("RULE")
        before = [t.lower_ for t in doc[max(span.sent.start, span.start - 3) : span.start]]
        f |= {f"B1={before[-1]}" if before else "B1=<s>"} | {f"B3={w}" for w in before}
        if any(w in NAMING_WORDS for w in before):
            f.add("NAMING")
        after = doc[span.end : span.end + 3]
        if len(after) >= 2 and after[0].text in (",", ":", "(") and after[1].lower_ in ("a", "an", "the"):
            f.add("APPOS")
        if len(after) >= 1:
            f.add(f"A1={after[0].lower_}")
        head = span.root.head
        hops = 0
        while head.pos_ not in ("VERB", "AUX") and head.head is not head and hops < 4:
            head, hops = head.head, hops + 1
        if head.pos_ in ("VERB", "AUX"):
            f.add(f"V={head.lemma_.lower()}")
            subj = {c.lower_ for c in head.children if c.dep_ in ("nsubj", "nsubjpass")}
            if subj & _US and head.lemma_.lower() in PROPOSE_VERBS:
                f.add("WE_PROPOSE")
            elif subj & _US:
                f.add("WE_VERB")
        if any(t.lower_ == "our" for t in doc[max(span.sent.start, span.start - 4) : span.start]):
            f.add("OUR")
    for key, n in count.items():
        out[key].add(f"N={_bucket(n, (1, 2, 4))}")
    return out


class ProposedModel:
    """Loaded JSON weights: {"bias": b, "weights": {feature: w}, "threshold": t}."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.bias: float = data["bias"]
        self.weights: dict[str, float] = data["weights"]
        self.threshold: float = data.get("threshold", 0.5)

    @classmethod
    def load(cls, path: Path) -> ProposedModel:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def prob(self, feats: set[str]) -> float:
        z = self.bias + sum(self.weights.get(x, 0.0) for x in feats)
        return 1 / (1 + math.exp(-z))

    def proposed_keys(self, doc: Any, mentions: Sequence[tuple[int, int, str]], rule_flagged: set[int]) -> set[str]:
        return {k for k, f in entity_features(doc, mentions, rule_flagged).items() if self.prob(f) >= self.threshold}
