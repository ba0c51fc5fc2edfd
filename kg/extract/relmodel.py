"""A feature-based relation classifier over entity pairs within a sentence (trained by scripts/train_gold.py).

Each ordered pair of mentions (a before b in the sentence) gets one label: NONE, or a kg relation type with a
direction (``USED_FOR>`` = a USED_FOR b, ``USED_FOR<`` = b USED_FOR a). Features: the two types, the words
between them, their head words, the neighbouring words, distance, mentions between and the dependency path.
The model is a multinomial logistic regression, shipped as plain JSON weights (no pickle, no scikit-learn at
run time). scripts/train_gold.py fits it on the mentions the extractor itself finds in kg-gold train
(run_time_examples: its spans and types, labelled by the gold relations whose two ends they name), as it sees
them at run time; the gold-mention training below is the earlier SciERC/SciER one (scripts/train_ner.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kg.extract.linear import LinearModel

NONE = "NONE"
_TYPE = {"model": "method"}  # the NER has no separate model type


def _ttype(t: str) -> str:
    return _TYPE.get(t, t)


def _path(doc: Any, i: int, j: int) -> list[str]:
    """Dependency path between tokens i and j: deps up from i to the common ancestor, lemmas on it, deps down."""
    up_i = [doc[i], *doc[i].ancestors]
    up_j = [doc[j], *doc[j].ancestors]
    idx_j = {t.i: k for k, t in enumerate(up_j)}
    for k, t in enumerate(up_i):
        if t.i in idx_j:
            a = up_i[:k]
            b = up_j[: idx_j[t.i]]
            return [f"^{x.dep_}" for x in a] + [t.lemma_.lower()] + [f"v{x.dep_}" for x in reversed(b)]
    return ["<nopath>"]


def pair_features(doc: Any, ents: Sequence[tuple[int, int, str]], ia: int, ib: int) -> list[str]:
    """Features of the pair (ents[ia], ents[ib]); token offsets into ``doc``, a before b."""
    sa, ea, ta = ents[ia]
    sb, eb, tb = ents[ib]
    ta, tb = _ttype(ta), _ttype(tb)
    tt = f"{ta}|{tb}"
    between = [t.lower_ for t in doc[ea:sb]]
    f = [f"T={tt}", f"Ta={ta}", f"Tb={tb}"]
    n = len(between)
    dist = "0" if n == 0 else "1" if n == 1 else "2-3" if n <= 3 else "4-6" if n <= 6 else "7-10" if n <= 10 else "11+"
    f += [f"D={dist}", f"TD={tt}|{dist}"]
    nb = sum(1 for s, _, _ in ents if ea <= s < sb)
    f.append(f"NB={min(nb, 3)}")
    f.append(f"TNB={tt}|{min(nb, 3)}")
    if n <= 12:
        f += [f"B={w}" for w in between]
        f += [f"TB={tt}|{w}" for w in between if w.isalpha()]
        f += [f"BB={x}_{y}" for x, y in zip(between, between[1:], strict=False)]
        if between:
            f += [f"B1={between[0]}", f"BL={between[-1]}", f"TB1={tt}|{between[0]}"]
        if n <= 4:
            f.append(f"BS={' '.join(between)}")
    else:
        f += [f"B1={between[0]}", f"BL={between[-1]}", "LONG"]
    ha, hb = doc[ea - 1].lower_, doc[eb - 1].lower_
    f += [f"Ha={ha}", f"Hb={hb}", f"HH={ha}|{hb}"]
    f.append(f"Pa={doc[sa - 1].lower_ if sa > doc[sa].sent.start else '<s>'}")
    f.append(f"Nb={doc[eb].lower_ if eb < doc[sb].sent.end else '</s>'}")
    ra = doc[sa:ea].root.i
    rb = doc[sb:eb].root.i
    p = _path(doc, ra, rb)
    if len(p) <= 7:
        f.append("P=" + " ".join(p))
        f.append(f"TP={tt}|" + " ".join(p))
    f += [f"PL={x}" for x in p if not x.startswith(("^", "v"))]
    f.append(f"PLEN={min(len(p), 8)}")
    return f


class RelationModel(LinearModel):
    """Loaded JSON weights: {"labels": [...], "bias": [...], "weights": {feature: [..per label..]}}."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.threshold: float = data.get("threshold", 0.5)
        self.max_between: int = data.get("max_between", 30)
        self.none_max: float | None = data.get("none_max")

    def predict(self, doc: Any, ents: Sequence[tuple[int, int, str]], sent_of: Sequence[int],
                skip: set[int] | None = None) -> list[tuple[int, int, str]]:
        """(head, tail, type) over mentions ``ents`` (token offsets, sorted), pairs within one sentence."""
        out = []
        for ia, ib in candidate_pairs(ents, sent_of, self.max_between, skip):
            p = self.probs(pair_features(doc, ents, ia, ib))
            if self.none_max is not None:  # a relation when NONE is unlikely enough: the likeliest other label
                k = max((i for i in range(len(p)) if i != self._none), key=p.__getitem__)
                if p[self._none] > self.none_max:
                    continue
            else:
                k = max(range(len(p)), key=p.__getitem__)
                if k == self._none or p[k] < self.threshold:
                    continue
            lab = self.labels[k]
            ty, d = lab[:-1], lab[-1]
            out.append((ia, ib, ty) if d == ">" else (ib, ia, ty))
        return out


def candidate_pairs(ents: Sequence[tuple[int, int, str]], sent_of: Sequence[int], max_between: int = 30,
                    skip: set[int] | None = None) -> Iterator[tuple[int, int]]:
    """(a, b) index pairs the classifier judges: a before b in one sentence, not overlapping, at most
    ``max_between`` tokens apart, neither in ``skip``."""
    skip = skip or set()
    for ia in range(len(ents)):
        if ia in skip:
            continue
        for ib in range(ia + 1, len(ents)):
            if sent_of[ib] != sent_of[ia]:
                break
            if ib in skip or ents[ib][0] - ents[ia][1] > max_between or ents[ib][0] < ents[ia][1]:
                continue
            yield ia, ib
