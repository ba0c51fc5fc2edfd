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
from functools import lru_cache
from itertools import islice
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
# RESULTS.md's "not results" the classifier cannot see from its window: the spread after a value ("90.8 ± 2.5%",
# "$\pm 2.5$" cleaned to "pm 2.5"), a significance level ("p < 0.001", "P-RF<0.001") and a confidence level
# ("(99% CI)")
_SPREAD_OR_P = re.compile(r"(?:±|(?<![A-Za-z])pm|\b[pP](?:[-_]\w+)?\s*[<=≤>])\s*$")
_CONFIDENCE = re.compile(r"^\s*(?:CI\b|confidence\b)")


_CHANGE = re.compile(r"\b(loss|losses|drop|drops|degradation|decrease|reduction|gap)\s+(?:of\s+)?(?:only\s+|just\s+|"
                     r"about\s+|around\s+|under\s+|below\s+|less\s+than\s+|up\s+to\s+)?$", re.I)


def never_a_result(text: str, s: int, e: int) -> bool:
    """A spread, a significance level or a confidence level: never a reported result (RESULTS.md)."""
    return bool(_SPREAD_OR_P.search(text[max(0, s - 12) : s]) or _CONFIDENCE.match(text[e : e + 12]))
# canonical_key, remembered: an abstract's words and chunk endings come back, within it and across abstracts
_key = lru_cache(maxsize=1 << 16)(canonical_key)


class _Doc:
    """What the features (and the rule layer's candidates) read of one parsed abstract, read from spaCy once: its
    text (``Doc.text`` joins every token anew on each read), each token's attributes, and the char spans, span
    roots, sentences and ancestors asked for so far (spaCy makes a new Token object on every access). Token
    attributes are lists by index."""

    __slots__ = ("doc", "text", "n", "orth", "idx", "lower", "lemma", "pos", "dep", "head", "alpha", "stop",
                 "punct", "num", "url", "spans", "roots", "sents", "verbs", "anc", "values")

    def __init__(self, doc: Any) -> None:
        from spacy import attrs as at

        self.doc = doc
        # one array read, no Token objects: strings by id as Token.text, lower_, lemma_, pos_, dep_ give them, HEAD
        # the offset to the head (a negative one wrapped as uint64), flags 0 or 1
        names = [at.ORTH, at.LOWER, at.LEMMA, at.POS, at.DEP, at.HEAD, at.IDX, at.IS_ALPHA, at.IS_STOP, at.IS_PUNCT,
                 at.LIKE_NUM, at.SPACY, at.LIKE_URL]
        cols = doc.to_array(names).T.tolist() if len(doc) else [[] for _ in names]
        strings = doc.vocab.strings
        self.orth: list[str] = [strings[x] for x in cols[0]]
        self.n = len(self.orth)
        # as Doc.text: each token's text, a space after it where it has one
        self.text: str = "".join([o + " " if ws else o for o, ws in zip(self.orth, cols[11], strict=True)])
        self.lower: list[str] = [strings[x] for x in cols[1]]
        self.lemma: list[str] = [strings[x].lower() for x in cols[2]]
        self.pos: list[str] = [strings[x] for x in cols[3]]
        self.dep: list[str] = [strings[x] for x in cols[4]]
        self.head: list[int] = [i + (h if h < 2**63 else h - 2**64) for i, h in enumerate(cols[5])]
        self.idx: list[int] = cols[6]
        self.alpha, self.stop, self.punct, self.num = cols[7:11]
        self.url: list[int] = cols[12]
        self.spans: dict[tuple[int, int], tuple[int, int] | None] = {}
        self.roots: dict[tuple[int, int], int] = {}
        self.sents: dict[int, tuple[int, int]] = {}
        self.verbs: dict[tuple[int, int], list[str]] = {}
        self.anc: dict[int, list[int]] = {}
        self.values: list[tuple[int, int]] | None = None

    def result_values(self) -> list[tuple[int, int]]:
        """The candidate values of the text (``value_spans``) that may be results (not a spread or a p-value)."""
        if self.values is None:
            self.values = [(s, e) for s, e in value_spans(self.text) if not never_a_result(self.text, s, e)]
        return self.values

    def span(self, s: int, e: int) -> tuple[int, int] | None:
        """(start, end) token indices of ``doc.char_span(s, e, alignment_mode="expand")``, None where it is."""
        key = (s, e)
        if key in self.spans:
            return self.spans[key]
        sp = self.doc.char_span(s, e, alignment_mode="expand")
        out = None if sp is None else (sp.start, sp.end)
        self.spans[key] = out
        return out

    def root(self, start: int, end: int) -> int:
        """The index of ``doc[start:end].root``."""
        key = (start, end)
        r = self.roots.get(key)
        if r is None:
            r = self.roots[key] = self.doc[start:end].root.i
        return r

    def sent(self, i: int) -> tuple[int, int]:
        """(start, end) of ``doc[i].sent``."""
        b = self.sents.get(i)
        if b is None:
            sent = self.doc[i].sent
            b = self.sents[i] = (sent.start, sent.end)
        return b

    def sent_verbs(self, start: int, end: int) -> list[str]:
        """The lowercased lemmas of the verbs of ``doc[start:end]``, in order."""
        key = (start, end)
        v = self.verbs.get(key)
        if v is None:
            v = self.verbs[key] = [self.lemma[i] for i in range(start, end) if self.pos[i] == "VERB"]
        return v

    def ancestors(self, i: int) -> list[int]:
        """``[doc[i], *list(doc[i].ancestors)[:4]]`` as indices."""
        a = self.anc.get(i)
        if a is None:
            a = self.anc[i] = [i, *(t.i for t in islice(self.doc[i].ancestors, 4))]
        return a


# the last doc the features read (a strong reference, so ``is`` cannot match a new doc); a doc is not changed
# once parsed
_LAST: _Doc | None = None


def doc_arrays(doc: Any) -> _Doc:
    """``doc``'s token attributes as lists, read once: the rule layer and the results step read the same doc."""
    global _LAST
    last = _LAST
    if last is not None and last.doc is doc:
        return last
    info = _Doc(doc)
    _LAST = info
    return info


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


@lru_cache(maxsize=1 << 16)
def _has_upper(text: str) -> bool:
    return any(c.isupper() for c in text)


@lru_cache(maxsize=8192)
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
    d = doc_arrays(doc)
    text = d.text
    v = text[s:e]
    span = d.span(s, e)
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
    start, end = span
    lower, lemma, pos = d.lower, d.lemma, d.pos
    tok = end - 1 if end > start else 0
    ss, se = d.sent(tok)
    before = range(max(ss, start - 4), start)
    after = range(end, min(se, end + 4))
    for i, t in enumerate(reversed(before)):
        f.append(f"B{i + 1}={lower[t]}")
        f.append(f"BB={lemma[t]}")
    for i, t in enumerate(after):
        f.append(f"A{i + 1}={lower[t]}")
        f.append(f"AA={lemma[t]}")
    if before:
        f.append(f"B1S={lower[before[-1]]}:{sign}")
    if after:
        f.append(f"A1S={lower[after[0]]}:{sign}")
    if not before:
        f.append("B1=<s>")
    if not after:
        f.append("A1=</s>")
    alpha, stop = d.alpha, d.stop
    f += [f"W={lemma[t]}" for t in range(max(ss, start - 10), min(se, end + 8)) if alpha[t] and not stop[t]]
    head = d.head[tok]
    f.append(f"DEP={d.dep[tok]}")
    f.append(f"H={lemma[head]}")
    f.append(f"HH={lemma[d.head[head]]}")
    # up the heads, at most 5 hops (a root is its own head)
    verb = head
    hops = 0
    while pos[verb] not in ("VERB", "AUX") and hops < 5:
        verb, hops = d.head[verb], hops + 1
    if pos[verb] in ("VERB", "AUX"):
        f.append(f"V={lemma[verb]}")
    f += [f"SV={x}" for x in d.sent_verbs(ss, se)]
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
    d = doc_arrays(doc)
    full = d.text

    def add(s: int, e: int, ty: str, proposed: bool = False) -> None:
        text = full[s:e]
        if not _WORD.search(text) or len(text) > 80:
            return
        key = _key(text)
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
        text = full[s:e]
        m = re.search(r"[\s-]+(?:score|scores|metric|metrics|dataset|datasets|benchmark|benchmarks)$", text)
        if m:
            add(s, s + m.start(), ty, proposed)
    pos, num, punct, idx, orth = d.pos, d.num, d.punct, d.idx, d.orth
    for ch in doc.noun_chunks:
        end_char = ch.end_char
        for t in range(ch.start, ch.end):
            if pos[t] not in ("DET", "PRON") and not num[t] and not punct[t]:
                add(idx[t], end_char, "chunk")
    for t in range(d.n):
        if punct[t] or num[t]:
            continue
        if pos[t] in ("PROPN", "NOUN", "X") or _has_upper(orth[t]):
            add(idx[t], idx[t] + len(orth[t]), "word")
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
    if len(spans) == 1:
        return spans[0]
    return min(spans, key=lambda x: (abs(x[0] - s), x[0]))


def slot_features(doc: Any, vs: int, ve: int, kind: str, p: Phrase, known: dict[str, dict[str, int]],
                  sent_of: Any, first_proposed: str | None = None) -> tuple[list[str], tuple[int, int]]:
    """Features of phrase ``p`` as a slot of the value at ``vs:ve`` (kind ``kind``), and the occurrence used;
    ``known`` maps each slot to the keys kg-gold train names in it and how often; ``sent_of(char)`` gives a
    sentence index."""
    cs, ce = _near(p.spans, vs)
    vsent, csent = sent_of(vs), sent_of(cs)
    d = doc_arrays(doc)
    text = d.text[cs:ce]
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
    vspan = d.span(vs, ve)
    cspan = d.span(cs, ce)
    if vspan is None or cspan is None or vspan[1] <= vspan[0] or cspan[1] <= cspan[0]:
        return f, (cs, ce)
    (vst, ven), (cst, cen) = vspan, cspan
    if cs < vs:
        between = range(cen, vst)
        side = "b"
    else:
        between = range(ven, cst)
        side = "a"
    gap = len(between)
    lower = d.lower
    f.append(f"D={side}{_bucket(gap, (0, 1, 2, 3, 5, 8, 12, 20))}")
    f.append(f"DT={side}{_bucket(gap, (1, 3, 8))}:{p.type}")
    if gap <= 8:
        f += [f"BW={side}:{lower[t]}" for t in between]
    else:
        f += [f"BWF={side}:{lower[t]}" for t in between if lower[t] in ("on", "of", "in", "by", "with", "over",
                                                                        "than", "achieve", "achieves", "and")]
    if gap <= 3 and any("," in d.orth[t] for t in between):
        f.append("COMMA")
    f.append(f"CB1={lower[cst - 1] if cst else '<s>'}")
    f.append(f"CA1={lower[cen] if cen < d.n else '</s>'}")
    root = d.root(cst, cen)
    f.append(f"CH={d.lemma[root]}")
    f.append(f"CDEP={d.dep[root]}")
    # dependency links: the phrase under the value's head, the value under the phrase, the verb's subject
    anc_v = d.ancestors(ven - 1)
    anc_c = d.ancestors(root)
    common = next((a for a in anc_v if a in anc_c), None)
    if common is not None:
        f.append(f"LCA={d.lemma[common]}")
        f.append(f"HOPS={anc_v.index(common)}:{anc_c.index(common)}")
    else:
        f.append("NOLCA")
    if d.dep[root] in ("nsubj", "nsubjpass"):
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
    nest = _nesting([occ for _, _, occ in rows])
    for (p, feats, _), (inside, holds) in zip(rows, nest, strict=True):
        feats.append(f"NEST={int(inside)}{int(holds)}:{p.type}")
    _list_order(doc, s, rows, sent_of)
    return rows


def _list_order(doc: Any, s: int, rows: list[tuple[Phrase, list[str], tuple[int, int]]], sent_of: Any) -> None:
    """Parallel lists ("ModelNet40 and ScanObjectNN, achieving 85.29% and 85.89%, respectively"; "61.1% and 75.6%
    on EgoSchema and NExT-QA"): where the value's sentence holds several values and several phrases of one entity
    type, whether the value's place among the values is the phrase's place among the phrases of its type."""
    vs = sent_of(s)
    values = [a for a, _ in doc_arrays(doc).result_values() if sent_of(a) == vs]
    if len(values) < 2 or s not in values:
        return
    k = values.index(s)
    by_type: dict[str, list[int]] = {}
    for p, _, (a, _) in rows:
        if p.type not in ("chunk", "word") and sent_of(a) == vs:
            by_type.setdefault(p.type, []).append(a)
    for found in by_type.values():
        found.sort()
    for p, feats, (a, _) in rows:
        starts = by_type.get(p.type)
        if starts is None or len(starts) < 2 or sent_of(a) != vs:
            continue
        same = starts.index(a) == k
        feats.append(f"ORD={'eq' if same else 'ne'}:{p.type}")
        if len(starts) == len(values):
            feats.append(f"ORDN={'eq' if same else 'ne'}")


def _nesting(occs: list[tuple[int, int]]) -> list[tuple[bool, bool]]:
    """For each span of ``occs``, whether another span of them holds it and whether it holds another: (x, y)
    holds (a, b) when x <= a, b <= y and (x, y) != (a, b), that is when x < a and y >= b, or x == a and y > b."""
    if len(occs) < 2:
        return [(False, False)] * len(occs)
    longest: dict[int, int] = {}  # start -> the furthest end, the nearest end
    shortest: dict[int, int] = {}
    for x, y in occs:
        if y > longest.get(x, -1):
            longest[x] = y
        if x not in shortest or y < shortest[x]:
            shortest[x] = y
    starts = sorted(longest)
    # before[k]: the furthest end of a span starting before starts[k]; after[k]: the nearest end of one after it
    before = [-1] * len(starts)
    for k in range(1, len(starts)):
        before[k] = max(before[k - 1], longest[starts[k - 1]])
    after = [math.inf] * len(starts)
    for k in range(len(starts) - 2, -1, -1):
        after[k] = min(after[k + 1], shortest[starts[k + 1]])
    pos = {x: k for k, x in enumerate(starts)}
    out = []
    for a, b in occs:
        k = pos[a]
        out.append((before[k] >= b or longest[a] > b, after[k] <= b or shortest[a] < b))
    return out


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


_LIST_SEP = re.compile(r"^\s*(?:,|;|/)?\s*(?:and|or)?\s*$")
_CAP_TYPE = re.compile(r"[ -](?:Dataset|Benchmark|Corpus)s?\b")
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)


def _runs(spans: list[tuple[int, int]], text: str) -> list[list[tuple[int, int]]]:
    """``spans`` (in text order) grouped into lists: neighbours with only a comma, "and" or "or" between them."""
    runs: list[list[tuple[int, int]]] = []
    for sp in spans:
        if runs and _LIST_SEP.match(text[runs[-1][-1][1] : sp[0]]):
            runs[-1].append(sp)
        else:
            runs.append([sp])
    return runs


def respective(text: str, sent: tuple[int, int], s: int, values: list[tuple[int, int]],
               rows: list[tuple[Phrase, list[str], tuple[int, int]]], types: tuple[str, ...]) -> tuple[int, int] | None:
    """"Evaluated on ALFWorld, ScienceWorld and TravelPlanner, AutoRefine achieves 98.4%, 70.4% and 27.1%
    respectively": in a sentence saying "respectively", the value ``s`` is the k-th of a list of n values, and the
    phrase is the k-th of the sentence's one list of n phrases of ``types``; None when that is not so."""
    a, b = sent
    if not _RESPECTIVELY.search(text, a, b):
        return None
    vals = [v for v in values if a <= v[0] < b]
    run = next((r for r in _runs(vals, text) if any(v[0] == s for v in r)), None)
    if run is None or len(run) < 2:
        return None
    k = next(i for i, v in enumerate(run) if v[0] == s)
    occs = sorted({occ for p, _, occ in rows if p.type in types and a <= occ[0] < b})
    # the longest of nested occurrences only ("Waymo Open Motion" in "Waymo Open Motion Dataset")
    occs = [o for o in occs if not any(q != o and q[0] <= o[0] and o[1] <= q[1] for q in occs)]
    lists = [r for r in _runs(occs, text) if len(r) == len(run)]
    return lists[0][k] if len(lists) == 1 else None


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
        # a phrase that is not likely enough on its own is still kept when it dominates the slot's candidates:
        # {slot: (lowest probability, least share)}
        self.dominant: dict[str, tuple[float, float]] = {k: (v[0], v[1]) for k, v in data.get("dominant", {}).items()}

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
        values = doc_arrays(doc).result_values()
        cands: list[Phrase] | None = None
        first: str | None = None
        for s, e in spans:
            if never_a_result(text, s, e):
                continue
            kind, _ = self.value_kind(value_features(doc, s, e, per_sent[sent_of(s)]))
            if kind == "NONE":
                continue
            m = _CHANGE.search(text[max(0, s - 28) : s]) if kind == "score" else None
            if m and (not m.group(1).lower().startswith("loss") or "%" in text[s:e]):
                # "an accuracy drop of 0.5%", "an accuracy loss of 0.9%": a difference (RESULTS.md; kg-gold results
                # train marks 13 of 14 so), where "a loss of 0.19" is the loss reached, a score
                kind = "gain"
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
                    dominant = self.dominant.get(slot)
                    if (probs[i] >= self.thresholds[slot] and share >= self.min_share.get(slot, 0.0)) or (
                            dominant is not None and probs[i] >= dominant[0] and share >= dominant[1]):
                        slots[slot] = rows[i][2]
            listed = respective(text, sents[sent_of(s)], s, values, rows, ("dataset",))
            if listed is not None:
                slots["dataset"] = listed
            ds = slots["dataset"]
            if ds is not None and (m := _CAP_TYPE.match(text, ds[1])):
                # "the Waymo Open Motion Dataset": a capitalised type word is part of the name (kg-gold results
                # train keeps it all 17 times), where kg's mention leaves it out as it does "the GSM8K dataset"
                slots["dataset"] = (ds[0], m.end())
            found.append((s, e, kind, slots))
        return found
