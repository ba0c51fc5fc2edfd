"""Reported results ("achieves 92.3% accuracy on GSM8K"): which numbers are results, and of what.

Two steps, each a logistic regression shipped as plain JSON weights (``results.json``, fitted by
``kg_train.results`` on kg-gold results train and selected on its dev; kg.extract.linear scores them):

1. **Values.** Every number in the text (with its attached ``%`` or ``×``) is a candidate; a three-way classifier
   over its context (the words around it, the verb it hangs from, its shape and magnitude) calls it ``score`` (a
   level reached), ``gain`` (a difference or ratio) or not a result (sizes, years, counts, hyperparameters).
2. **Slots.** For each result, the system, dataset and metric are each chosen among the abstract's phrases: kg's
   entity mentions, noun chunks and their endings, and name-shaped words. A binary classifier per slot scores
   every phrase against the value (its type, whether the paper proposes it, the words between them, distance,
   dependency links, whether kg-gold train names it in that slot); the best one is the slot's text when its
   probability passes the slot's threshold, else the slot is unstated (``None``).

Texts are chosen in the cleaned text the parser saw; the caller maps offsets back to the original.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.canon import canonical_key
from kg.extract.linear import softmax_probs

SLOTS = ("system", "dataset", "metric")
# a number as written, with the sign attached to it: "92.3%", "3.2×", "7x", "1,024", ".85", "3.2times" (LaTeX
# "3.2$\times$" once cleaned)
_VALUE = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%|\s?×|times\b|\s?[xX](?![\w.])(?!\.\d))?"
                    r"|\.\d+%?")
_SIGN = {"%": "pct", "×": "ratio", "x": "ratio", "X": "ratio", "s": "ratio"}
_WORD = re.compile(r"\w")


def value_spans(text: str) -> list[tuple[int, int]]:
    """Candidate values: numbers not inside a word ("GPT-4", "ResNet50", "7B", "3D"), the second end of a range
    ("57-92%") included."""
    out = []
    for m in _VALUE.finditer(text):
        s, e = m.span()
        before = text[s - 1] if s else " "
        if before.isalnum() or before in "._" or (before == "-" and s >= 2 and text[s - 2].isalpha()):
            continue
        if e < len(text) and (text[e].isalnum() or text[e] == "_") and text[e - 1].isdigit():
            continue
        out.append((s, e))
    return out


def number_of(text: str) -> float | None:
    """The number a value states: "92.3%" -> 92.3, "1,024" -> 1024.0, "3.2×" -> 3.2."""
    m = re.search(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+", text)
    return float(m.group(0).replace(",", "")) if m else None


def _bucket(x: float, edges: Sequence[float]) -> str:
    for e in edges:
        if x <= e:
            return str(e)
    return f">{edges[-1]}"


def _shape(text: str) -> str:
    if text.isupper() and len(text) > 1:
        return "UP"
    if any(c.isdigit() for c in text):
        return "DIG"
    if any(c.isupper() for c in text[1:]):
        return "MIX"
    if text[:1].isupper():
        return "CAP"
    return "low"


def value_features(doc: Any, s: int, e: int, n_in_sent: int) -> list[str]:
    """Features of the candidate value ``doc.text[s:e]``."""
    text = doc.text
    v = text[s:e]
    span = doc.char_span(s, e, alignment_mode="expand")
    sign = next((_SIGN[c] for c in reversed(v.strip()) if c in _SIGN), "none")
    num = number_of(v) or 0.0
    f = [f"SIGN={sign}", f"MAG={_bucket(num, (0.999, 1, 10, 100, 1000, 1899, 2030, 10**5))}",
         f"DEC={'.' in v}", f"SIGNMAG={sign}:{_bucket(num, (1, 10, 100, 1000))}", f"NS={min(n_in_sent, 6)}"]
    if s >= 1 and text[s - 1] == "-":
        f.append("RANGE_END" if s >= 2 and text[s - 2].isdigit() else "MINUS")
    if e < len(text) - 1 and text[e] in "-–" and text[e + 1].isdigit():
        f.append("RANGE_START")
    if span is None:
        return f
    tok = span[-1] if len(span) else doc[0]
    sent = tok.sent
    before = [t for t in doc[max(sent.start, span.start - 4) : span.start]]
    after = [t for t in doc[span.end : min(sent.end, span.end + 4)]]
    for i, t in enumerate(reversed(before)):
        f.append(f"B{i + 1}={t.lower_}")
        f.append(f"BB={t.lemma_.lower()}")
    for i, t in enumerate(after):
        f.append(f"A{i + 1}={t.lower_}")
        f.append(f"AA={t.lemma_.lower()}")
    if before:
        f.append(f"B1S={before[-1].lower_}:{sign}")
    if after:
        f.append(f"A1S={after[0].lower_}:{sign}")
    if not before:
        f.append("B1=<s>")
    if not after:
        f.append("A1=</s>")
    win = doc[max(sent.start, span.start - 10) : min(sent.end, span.end + 8)]
    f += [f"W={t.lemma_.lower()}" for t in win if t.is_alpha and not t.is_stop]
    head = tok.head
    f.append(f"DEP={tok.dep_}")
    f.append(f"H={head.lemma_.lower()}")
    f.append(f"HH={head.head.lemma_.lower()}")
    verb = head
    hops = 0
    while verb.pos_ not in ("VERB", "AUX") and verb.head is not verb and hops < 5:
        verb, hops = verb.head, hops + 1
    if verb.pos_ in ("VERB", "AUX"):
        f.append(f"V={verb.lemma_.lower()}")
    f += [f"SV={t.lemma_.lower()}" for t in sent if t.pos_ == "VERB"]
    return f


@dataclass(slots=True)
class Phrase:
    """A slot candidate: a phrase of the abstract (its occurrence nearest the value), with what kg knows of it."""

    key: str
    spans: list[tuple[int, int]]  # every occurrence, (start, end) in the cleaned text
    type: str  # kg's entity type, "chunk" for a noun chunk or its ending, "word" for a name-shaped word
    proposed: bool = False


def phrases(doc: Any, mentions: Sequence[tuple[int, int, str, bool]]) -> list[Phrase]:
    """The abstract's slot candidates: ``mentions`` (start, end, type, proposed) first, then noun chunks and their
    endings ("the top-1 accuracy" -> "top-1 accuracy", "accuracy") and name-shaped or noun words."""
    by_key: dict[str, Phrase] = {}

    def add(s: int, e: int, ty: str, proposed: bool = False) -> None:
        text = doc.text[s:e]
        if not _WORD.search(text) or len(text) > 80:
            return
        key = canonical_key(text)
        if not key:
            return
        p = by_key.get(key)
        if p is None:
            by_key[key] = Phrase(key, [(s, e)], ty, proposed)
        else:
            if (s, e) not in p.spans:
                p.spans.append((s, e))
            p.proposed |= proposed
            if p.type in ("chunk", "word") and ty not in ("chunk", "word"):
                p.type = ty

    for s, e, ty, proposed in mentions:
        add(s, e, ty, proposed)
        text = doc.text[s:e]
        m = re.search(r"[\s-]+(?:score|scores|metric|metrics|dataset|datasets|benchmark|benchmarks)$", text)
        if m:
            add(s, s + m.start(), ty, proposed)
    for ch in doc.noun_chunks:
        toks = [t for t in ch if t.pos_ not in ("DET", "PRON") and not t.like_num]
        for i in range(len(toks)):
            if toks[i].is_punct:
                continue
            add(toks[i].idx, ch.end_char, "chunk")
    for t in doc:
        name_like = t.pos_ in ("PROPN", "NOUN", "X") or any(c.isupper() for c in t.text)
        if name_like and not t.is_punct and not t.like_num:
            add(t.idx, t.idx + len(t.text), "word")
    return list(by_key.values())


def candidates_for(cands: list[Phrase], s: int, e: int, sent_of: Any) -> list[Phrase]:
    """The phrases that may fill a slot of the value at ``s:e``: those in its sentence, and kg's entity mentions
    (and the paper's contributions) elsewhere; never a phrase holding the number itself."""
    vs = sent_of(s)
    out = []
    for p in cands:
        if any(a < e and s < b for a, b in p.spans):
            continue
        if p.type in ("chunk", "word") and not p.proposed and all(sent_of(a) != vs for a, _ in p.spans):
            continue
        out.append(p)
    return out


def _near(spans: list[tuple[int, int]], s: int) -> tuple[int, int]:
    return min(spans, key=lambda x: (abs(x[0] - s), x[0]))


def slot_features(doc: Any, vs: int, ve: int, kind: str, p: Phrase, known: dict[str, dict[str, int]],
                  sent_of: Any, first_proposed: str | None = None) -> tuple[list[str], tuple[int, int]]:
    """Features of phrase ``p`` as a slot of the value at ``vs:ve`` (kind ``kind``), and the occurrence used;
    ``known`` maps each slot to the keys kg-gold train names in it and how often; ``sent_of(char)`` gives a
    sentence index."""
    cs, ce = _near(p.spans, vs)
    vsent, csent = sent_of(vs), sent_of(cs)
    text = doc.text[cs:ce]
    f = [f"T={p.type}", f"SH={_shape(text)}", f"LEN={min(len(text.split()), 4)}", f"N={min(len(p.spans), 3)}",
         f"K={kind}", f"TK={p.type}:{kind}"]
    if p.proposed:
        f.append("PROP")
        if first_proposed == p.key:
            f.append("PROP_FIRST")
    for slot, names in known.items():
        n = names.get(p.key, 0)
        if n:
            f.append(f"KNOWN_{slot}={_bucket(n, (1, 3))}")
    same = vsent == csent
    f.append(f"SS={same}")
    if not same:
        f.append(f"SD={_bucket(abs(vsent - csent), (1, 2, 4))}:{'b' if cs < vs else 'a'}")
        f.append(f"ST={p.type}:{'PROP' if p.proposed else '-'}")
        if csent == 0:
            f.append("FIRST_SENT")
        return f, (cs, ce)
    vspan = doc.char_span(vs, ve, alignment_mode="expand")
    cspan = doc.char_span(cs, ce, alignment_mode="expand")
    if vspan is None or cspan is None or not len(vspan) or not len(cspan):
        return f, (cs, ce)
    if cs < vs:
        between = doc[cspan.end : vspan.start]
        side = "b"
    else:
        between = doc[vspan.end : cspan.start]
        side = "a"
    gap = len(between)
    f.append(f"D={side}{_bucket(gap, (0, 1, 2, 3, 5, 8, 12, 20))}")
    f.append(f"DT={side}{_bucket(gap, (1, 3, 8))}:{p.type}")
    if gap <= 8:
        f += [f"BW={side}:{t.lower_}" for t in between]
    else:
        f += [f"BWF={side}:{t.lower_}" for t in between if t.lower_ in ("on", "of", "in", "by", "with", "over",
                                                                        "than", "achieve", "achieves", "and")]
    if between.text.count(",") >= 1 and gap <= 3:
        f.append("COMMA")
    prev = doc[cspan.start - 1] if cspan.start else None
    nxt = doc[cspan.end] if cspan.end < len(doc) else None
    f.append(f"CB1={prev.lower_ if prev is not None else '<s>'}")
    f.append(f"CA1={nxt.lower_ if nxt is not None else '</s>'}")
    f.append(f"CH={cspan.root.lemma_.lower()}")
    f.append(f"CDEP={cspan.root.dep_}")
    vt = vspan[-1]
    # dependency links: the phrase under the value's head, the value under the phrase, the verb's subject
    anc_v = [vt, *list(vt.ancestors)[:4]]
    anc_c = [cspan.root, *list(cspan.root.ancestors)[:4]]
    common = next((a for a in anc_v if a in anc_c), None)
    if common is not None:
        f.append(f"LCA={common.lemma_.lower()}")
        f.append(f"HOPS={anc_v.index(common)}:{anc_c.index(common)}")
    else:
        f.append("NOLCA")
    if cspan.root.dep_ in ("nsubj", "nsubjpass"):
        f.append("SUBJ")
    # nearest of its kind: no other phrase of this type between the value and this one
    return f, (cs, ce)


def first_proposed(cands: list[Phrase]) -> str | None:
    """The key of the paper's contribution written first (its named method, usually)."""
    props = [p for p in cands if p.proposed]
    return min(props, key=lambda p: min(p.spans)).key if props else None


def candidate_features(doc: Any, s: int, e: int, kind: str, near: list[Phrase], known: dict[str, dict[str, int]],
                       sent_of: Any, first: str | None) -> list[tuple[Phrase, list[str], tuple[int, int]]]:
    """Each phrase in ``near`` with its features as a slot of the value at ``s:e`` and the occurrence used; a
    phrase inside a longer candidate ("F1" in "overall F1") or holding a shorter one says so."""
    rows = [(p, *slot_features(doc, s, e, kind, p, known, sent_of, first)) for p in near]
    occs = [occ for _, _, occ in rows]
    for p, feats, (a, b) in rows:
        inside = any(x <= a and b <= y and (x, y) != (a, b) for x, y in occs)
        holds = any(a <= x and y <= b and (x, y) != (a, b) for x, y in occs)
        feats.append(f"NEST={int(inside)}{int(holds)}:{p.type}")
    return rows


def unstated_features(doc: Any, s: int, e: int, kind: str, rows: list[tuple[Phrase, list[str], tuple[int, int]]],
                      sent_of: Any) -> list[str]:
    """Features of "the abstract does not say" for a slot of the value at ``s:e``, scored beside its phrases:
    the words around the value, which kinds of phrase its sentence holds, whether the paper names a contribution."""
    vs = sent_of(s)
    f = ["U", f"U:K={kind}"]
    span = doc.char_span(s, e, alignment_mode="expand")
    if span is not None and len(span):
        sent = span[-1].sent
        for i, t in enumerate(reversed(doc[max(sent.start, span.start - 3) : span.start])):
            f.append(f"U:B{i + 1}={t.lower_}")
        for i, t in enumerate(doc[span.end : min(sent.end, span.end + 3)]):
            f.append(f"U:A{i + 1}={t.lower_}")
        f += [f"U:W={t.lemma_.lower()}" for t in doc[max(sent.start, span.start - 8) : min(sent.end, span.end + 8)]
              if t.is_alpha and (not t.is_stop or t.lower_ in ("we", "our", "it", "its", "they", "on", "across"))]
    types = {p.type for p, _, (a, _) in rows if sent_of(a) == vs}
    f += [f"U:HAS={t}" for t in sorted(types)]
    if any(p.proposed for p, _, _ in rows):
        f.append("U:PROP")
    if any(p.proposed and sent_of(a) == vs for p, _, (a, _) in rows):
        f.append("U:PROP_SS")
    return f


class ResultModel:
    """Loaded ``results.json``: the value classifier, the three slot classifiers, their thresholds and the names
    kg-gold train gives each slot.

    A slot model is either binary (a probability per phrase, the best one kept above a threshold) or listwise
    (``"listwise": true``: every phrase and "unstated" scored on one scale, the highest wins, ``null_bias`` added
    to "unstated")."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.value = data["value"]
        self.value_threshold: float = data.get("value_threshold", 0.5)
        self.slots: dict[str, dict[str, Any]] = data["slots"]
        self.thresholds: dict[str, float] = data["thresholds"]
        self.known: dict[str, dict[str, int]] = data.get("known", {})
        self.null_mass: dict[str, float] = data.get("null_mass", {})
        self.min_share: dict[str, float] = data.get("min_share", {})

    @classmethod
    def load(cls, path: Path) -> ResultModel:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def value_kind(self, feats: list[str]) -> tuple[str, float]:
        """("score" | "gain" | "NONE", P(result))."""
        pr = softmax_probs(self.value, feats)
        labels = self.value["labels"]
        none = pr[labels.index("NONE")]
        best = max((i for i in range(len(labels)) if labels[i] != "NONE"), key=lambda i: pr[i])
        return (labels[best] if 1 - none >= self.value_threshold else "NONE"), 1 - none

    def slot_prob(self, slot: str, feats: list[str]) -> float:
        data = self.slots[slot]
        weights = data["weights"]
        z = data["bias"][0] + sum(weights[x][0] for x in feats if x in weights)
        return 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))

    def find(self, doc: Any, mentions: Sequence[tuple[int, int, str, bool]]
             ) -> list[tuple[int, int, str, dict[str, tuple[int, int] | None]]]:
        """(value start, value end, kind, {slot: (start, end) or None}) in the cleaned text, in text order."""
        text = doc.text
        sents = [(s.start_char, s.end_char) for s in doc.sents]
        starts = [s for s, _ in sents]

        def sent_of(c: int) -> int:
            return max(0, bisect_right(starts, c) - 1)

        spans = value_spans(text)
        per_sent: dict[int, int] = {}
        for s, _ in spans:
            per_sent[sent_of(s)] = per_sent.get(sent_of(s), 0) + 1
        found = []
        cands: list[Phrase] | None = None
        first: str | None = None
        for s, e in spans:
            kind, _ = self.value_kind(value_features(doc, s, e, per_sent[sent_of(s)]))
            if kind == "NONE":
                continue
            if cands is None:
                cands = phrases(doc, mentions)
                first = first_proposed(cands)
            rows = candidate_features(doc, s, e, kind, candidates_for(cands, s, e, sent_of), self.known, sent_of,
                                      first)
            slots: dict[str, tuple[int, int] | None] = {}
            unstated: list[str] | None = None
            for slot in SLOTS:
                data = self.slots[slot]
                if data.get("listwise"):
                    if unstated is None:
                        unstated = unstated_features(doc, s, e, kind, rows, sent_of)
                    w = data["weights"]
                    best = sum(w.get(x, 0.0) for x in unstated) + data.get("null_bias", 0.0)
                    slots[slot] = None
                    for _, feats, occ in rows:
                        z = sum(w.get(x, 0.0) for x in feats)
                        if z > best:
                            best, slots[slot] = z, occ
                    continue
                probs = [self.slot_prob(slot, feats) for _, feats, _ in rows]
                slots[slot] = None
                if probs:
                    i = max(range(len(probs)), key=probs.__getitem__)
                    # the best phrase must be likely on its own and stand out from the rest (the others' mass
                    # plus a slot's "unstated" mass): "our method ... 92%" with no name near is often unstated
                    share = probs[i] / (sum(probs) + self.null_mass.get(slot, 0.0))
                    if probs[i] >= self.thresholds[slot] and share >= self.min_share.get(slot, 0.0):
                        slots[slot] = rows[i][2]
            found.append((s, e, kind, slots))
        return found
