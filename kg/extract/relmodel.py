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
from pathlib import Path
from typing import Any

from kg.extract.linear import LinearModel, fit_softmax, save_model

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


def _label(gold: dict[tuple[str, str], str], heads: set[str], tails: set[str]) -> str:
    """The directed label of a pair whose ends name the gold entities ``heads`` and ``tails``: the first found in
    sorted order (a set's order follows the hash seed, and the same training command must give the same model)."""
    for a in sorted(heads):
        for b in sorted(tails):
            if (a, b) in gold:
                return gold[(a, b)] + ">"
            if (b, a) in gold:
                return gold[(b, a)] + ("<" if gold[(b, a)] != "COMPARED_WITH" else ">")
    return NONE


def run_time_examples(doc: Any, ents: Sequence[tuple[int, int, str]], sent_of: Sequence[int], names: Sequence[str],
                      ids: Sequence[set[str]], gold: dict[tuple[str, str], str]) -> list[tuple[list[str], str]]:
    """Training pairs of one train abstract as the extractor sees it at run time: ``ents`` its own mentions
    (token offsets, its types) and their ``sent_of``, ``names`` each mention's name key, ``ids`` the gold entities
    each names (empty when none), ``gold`` the relations {(head id, tail id): type}. Pairs are those predict()
    judges, less two mentions of one name (no relation joins them)."""
    return [(pair_features(doc, ents, ia, ib), _label(gold, ids[ia], ids[ib]))
            for ia, ib in candidate_pairs(ents, sent_of) if names[ia] != names[ib]]


def fit_relation_model(examples: list[tuple[list[str], str]], out: Path, *, seed: int = 0, C: float = 0.5,
                       none_max: float = 0.6) -> None:
    """Fit on (features, label) pairs (run_time_examples); needs scikit-learn."""
    y = [lab for _, lab in examples]
    data = fit_softmax([fs for fs, _ in examples], y, C=C, min_count=2, seed=seed, max_iter=300)
    data |= {"max_between": 30, "none_max": none_max}
    save_model(data, out)
    print(f"relation model: {len(y)} pairs ({sum(lab != NONE for lab in y)} related), {len(data['weights'])} "
          f"features, {out.stat().st_size / 1e6:.1f} MB")


# ------------------------------------------- training on gold mentions (scripts/train_ner.py, SciERC/SciER)
def _examples(sents: list[dict], nlp: Any) -> tuple[list[list[str]], list[str], list[tuple[int, int, list]]]:
    from spacy.tokens import Doc

    X, y, index = [], [], []
    docs = nlp.pipe(Doc(nlp.vocab, words=s["words"]) for s in sents)
    for si, (s, doc) in enumerate(zip(sents, docs, strict=True)):
        ents = [tuple(e) for e in s["ents"] if e[2]]
        gold = {}
        for a, b, ty in s["rels"]:
            gold[(tuple(a), tuple(b))] = ty
        for ia in range(len(ents)):
            for ib in range(ia + 1, len(ents)):
                a, b = ents[ia][:2], ents[ib][:2]
                if ents[ib][0] - ents[ia][1] > 30:
                    continue
                lab = NONE
                if (a, b) in gold:
                    lab = gold[(a, b)] + ">"
                elif (b, a) in gold:
                    lab = gold[(b, a)] + ("<" if gold[(b, a)] != "COMPARED_WITH" else ">")
                X.append(pair_features(doc, ents, ia, ib))
                y.append(lab)
                index.append((si, ia, ib))
    return X, y, index


def train_relation_model(train: list[dict], nlp: Any, out: Path, *, dev: list[dict] | None = None, seed: int = 0,
                         C: float = 0.5, min_count: int = 2, none_max: float | None = 0.6) -> None:
    """Fit on gold pairs; ``none_max`` (predict a relation when P(NONE) <= it) and ``C`` were chosen end to end on
    SciERC dev with predicted entities (kg eval strict relations F1, extractor trained-8, C 0.5: none_max 0.3 14.1,
    0.4 16.5, 0.5 15.9, 0.55 17.0, 0.6 17.5, 0.7 16.6, 0.8 16.0; C 0.25 and 1.0 lower at 0.6-0.8). One relation is
    about 0.5 F1 on these 220 gold relations, so neighbouring values are within the noise."""
    from collections import Counter

    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    X, y, _ = _examples(train, nlp)
    counts = Counter(x for fs in X for x in set(fs))
    X = [{x: 1 for x in fs if counts[x] >= min_count} for fs in X]
    vec = DictVectorizer()
    M = vec.fit_transform(X)
    clf = LogisticRegression(C=C, max_iter=300, random_state=seed)
    clf.fit(M, y)
    names = vec.get_feature_names_out()
    labels = list(clf.classes_)
    W = clf.coef_.T  # features x labels
    weights = {}
    for k, name in enumerate(names):
        row = W[k]
        if abs(row).max() >= 0.01:
            weights[str(name)] = [round(float(v), 3) for v in row]
    data = {"labels": labels, "bias": [round(float(b), 4) for b in clf.intercept_], "weights": weights,
            "threshold": 0.5, "max_between": 30, "none_max": none_max}
    if dev:
        data["threshold"] = _tune(data, dev, nlp)
    save_model(data, out)
    print(f"relation model: {len(y)} pairs, {len(weights)} features, labels {labels}, "
          f"threshold {data['threshold']}, {out.stat().st_size / 1e6:.1f} MB")


def _tune(data: dict, dev: list[dict], nlp: Any) -> float:
    """Threshold with the best relation F1 on the dev sentences, given gold entities."""
    model = RelationModel(data)
    X, y, _ = _examples(dev, nlp)
    P = [model.probs(f) for f in X]
    best = (0.0, 0.5)
    for th in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
        tp = fp = fn = 0
        for p, g in zip(P, y, strict=True):
            k = max(range(len(p)), key=p.__getitem__)
            lab = model.labels[k] if p[k] >= th else NONE
            if lab == g and g != NONE:
                tp += 1
            else:
                fp += lab != NONE
                fn += g != NONE
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        print(f"  dev (gold entities) threshold {th}: relation F1 {100 * f1:.1f}")
        best = max(best, (f1, th))
    return best[1]
