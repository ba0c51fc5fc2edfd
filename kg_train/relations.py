"""Training the within-sentence relation classifier (kg.extract.relmodel): on the mentions the extractor finds in
kg-gold train (``run_time_examples``, what train_gold.py uses), or on gold mentions (SciERC/SciER, train_ner.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg.extract.relmodel import NONE, RelationModel, candidate_pairs, pair_features
from kg_train.fit import fit_softmax, save_model


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
