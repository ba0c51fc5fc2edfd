"""Relations across sentences: a paper's contribution and the tasks, datasets, metrics it is used for or tested on.

Four in ten of kg-gold's relations join entities that never share a sentence ("We propose X. ... On D, it
reaches ..."), out of reach of the sentence-level classifier (kg.extract.relmodel). Most have a proposed entity
at one end. Every pair of distinct entities of an abstract that share no sentence, at least one of them flagged
proposed, gets one label: NONE or a relation with a direction (``USED_FOR>``: the first entity, the proposed
one, USED_FOR the other). Features: the two types and proposed flags, the distance in sentences, the other
entity's mention count and first sentence, the word before each of its mentions and the words of its
sentences. A logistic regression trained on kg-gold train's gold entities (scripts/train_gold.py ``--step
docrel``), shipped as plain JSON weights like the others.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from kg.extract.linear import LinearModel

NONE = "NONE"


class Entity:
    """One distinct entity of an abstract: its type, proposed flag and mentions as (sentence, token before)."""

    __slots__ = ("key", "type", "proposed", "mentions", "first")

    def __init__(self, key: str, type_: str, proposed: bool, first: int) -> None:
        self.key, self.type, self.proposed, self.first = key, type_, proposed, first
        self.mentions: list[tuple[int, str]] = []


def _bucket(n: int, edges: Sequence[int]) -> str:
    for e in edges:
        if n <= e:
            return str(e)
    return f">{edges[-1]}"


def pair_features(a: Entity, b: Entity, sent_words: Sequence[set[str]], n_sents: int) -> list[str]:
    """Features of (a, b): a the proposed end (or the first of two proposed ones)."""
    tt = f"{a.type}|{b.type}"
    f = [f"T={tt}", f"TP={tt}|{int(a.proposed)}{int(b.proposed)}"]
    sa = {s for s, _ in a.mentions}
    sb = {s for s, _ in b.mentions}
    d = min(abs(x - y) for x in sa for y in sb)
    f += [f"D={_bucket(d, (1, 2, 4))}", f"TD={tt}|{_bucket(d, (1, 2, 4))}"]
    f.append(f"NB={_bucket(len(b.mentions), (1, 2, 4))}")
    f.append(f"NA={_bucket(len(a.mentions), (1, 2, 4))}")
    first_b = min(sb)
    f.append(f"FB={tt}|{_bucket(first_b, (0, 1, 2, 4))}")
    f.append(f"LB={tt}|{int(max(sb) >= n_sents - 2)}")
    f.append(f"AB={tt}|{int(min(sa) < first_b)}")
    for _, w in b.mentions:
        f.append(f"BW={tt}|{w}")
    for s in sb:
        f += [f"SW={b.type}|{w}" for w in sent_words[s]]
        f.append(f"SA={tt}|{int(s in sa)}")
    return list(dict.fromkeys(f))


def candidate_pairs(ents: Sequence[Entity]) -> list[tuple[int, int]]:
    """(a, b) index pairs: distinct entities sharing no sentence, a proposed (a the earlier when both are).
    Pairs of two entities not proposed, in the same model, lost 1.3 relation F1 on kg-gold dev."""
    out = []
    for i, a in enumerate(ents):
        sa = {s for s, _ in a.mentions}
        for j, b in enumerate(ents):
            if i == j or not a.proposed or (b.proposed and b.first < a.first):
                continue
            if sa & {s for s, _ in b.mentions}:
                continue
            out.append((i, j))
    return out


def entities(doc: Any, mentions: Sequence[tuple[int, int, str, str, bool]]) -> tuple[list[Entity], list[int]]:
    """Distinct entities from mentions (start_char, end_char, type, key, proposed), sorted by start, and the
    entity index of each mention. The first mention gives the type; any proposed mention flags the entity."""
    starts = [s.start_char for s in doc.sents]
    by_key: dict[str, int] = {}
    ents: list[Entity] = []
    of = []
    for s, e, ty, key, prop in mentions:
        k = by_key.get(key)
        if k is None:
            k = by_key[key] = len(ents)
            ents.append(Entity(key, ty, prop, s))
        ent = ents[k]
        ent.proposed = ent.proposed or prop
        span = doc.char_span(s, e, alignment_mode="expand")
        before = doc[span.start - 1].lower_ if span is not None and span.start > 0 else "<s>"
        ent.mentions.append((bisect_right(starts, s) - 1, before))
        of.append(k)
    return ents, of


def sentence_words(doc: Any) -> list[set[str]]:
    """Lower-cased alphabetic words of each sentence of ``doc``."""
    return [{t.lower_ for t in s if t.is_alpha and len(t) > 1} for s in doc.sents]


class DocRelationModel(LinearModel):
    """Loaded JSON weights: {"labels", "bias", "weights": {feature: [..per label..]}, "none_max"}."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.none_max: float = data.get("none_max", 0.5)

    def predict(self, ents: Sequence[Entity], sent_words: Sequence[set[str]]) -> list[tuple[int, int, str]]:
        """(head, tail, type) as indexes into ``ents`` for pairs whose P(NONE) <= none_max."""
        out = []
        for i, j in candidate_pairs(ents):
            p = self.probs(pair_features(ents[i], ents[j], sent_words, len(sent_words)))
            if p[self._none] > self.none_max:
                continue
            k = max((x for x in range(len(p)) if x != self._none), key=p.__getitem__)
            ty, d = self.labels[k][:-1], self.labels[k][-1]
            out.append((i, j, ty) if d == ">" else (j, i, ty))
        return out


def add_doc_relations(model: DocRelationModel, doc: Any, spans: Sequence[tuple[int, int, str, str]],
                      proposed: set[int], rels: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``rels`` (mention-index triples) plus the model's cross-sentence relations between entities not yet
    related; ``spans`` are the chosen mentions (start_char, end_char, type, key). A relation joins the first
    mentions of its two entities."""
    ents, of = entities(doc, [(s, e, ty, k, i in proposed) for i, (s, e, ty, k) in enumerate(spans)])
    first: dict[int, int] = {}  # entity index -> index of its first mention
    for i, k in enumerate(of):
        first.setdefault(k, i)
    linked = {frozenset((of[h], of[t])) for h, t, _ in rels}
    out = list(rels)
    for a, b, ty in model.predict(ents, sentence_words(doc)):
        if frozenset((a, b)) not in linked:
            out.append((first[a], first[b], ty))
            linked.add(frozenset((a, b)))
    return out
