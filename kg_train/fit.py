"""Fitting kg.extract.linear's models: multinomial logistic regression (scikit-learn), saved as plain JSON."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any


def save_model(data: dict[str, Any], out: Path) -> None:
    """Write fitted weights as compact JSON (what ``LinearModel.load`` reads)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")

def fit_softmax(X: list[list[str]], y: list[str], *, C: float, min_count: int, seed: int,
                max_iter: int = 500, min_weight: float = 0.02) -> dict[str, Any]:
    """Fit on feature lists ``X`` and labels ``y`` (features seen fewer than ``min_count`` times left out, and
    those whose weights are all under ``min_weight``: they move decisions little, and the shipped model has a
    25 MB cap); needs scikit-learn."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    counts = Counter(x for fs in X for x in set(fs))
    vec = DictVectorizer()
    M = vec.fit_transform([{x: 1 for x in fs if counts[x] >= min_count} for fs in X])
    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    clf.fit(M, y)
    weights = {}
    for name, row in zip(vec.get_feature_names_out(), clf.coef_.T, strict=True):
        if abs(row).max() >= min_weight:
            weights[str(name)] = [round(float(v), 3) for v in row]
    return {"labels": [str(c) for c in clf.classes_], "bias": [round(float(b), 4) for b in clf.intercept_],
            "weights": weights}
