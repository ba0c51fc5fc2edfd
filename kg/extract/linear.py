"""Multinomial logistic regression shipped as plain JSON weights: scoring at run time, fitting at training time.

The relation, cross-sentence relation and span models share it: {"labels": [...], "bias": [...], "weights":
{feature: [..per label..]}} plus each model's own thresholds. No pickle, no scikit-learn at run time.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any


def softmax_probs(data: dict[str, Any], feats: list[str]) -> list[float]:
    """P(label) for binary features ``feats`` under ``data``'s bias and weights."""
    z = list(data["bias"])
    weights = data["weights"]
    for x in feats:
        w = weights.get(x)
        if w is not None:
            for k, v in enumerate(w):
                z[k] += v
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def fit_softmax(X: list[list[str]], y: list[str], *, C: float, min_count: int, seed: int,
                max_iter: int = 500) -> dict[str, Any]:
    """Fit on feature lists ``X`` and labels ``y`` (features seen fewer than ``min_count`` times left out; weights
    under 0.01 for every label dropped); needs scikit-learn."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    counts = Counter(x for fs in X for x in set(fs))
    vec = DictVectorizer()
    M = vec.fit_transform([{x: 1 for x in fs if counts[x] >= min_count} for fs in X])
    clf = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    clf.fit(M, y)
    weights = {}
    for name, row in zip(vec.get_feature_names_out(), clf.coef_.T, strict=True):
        if abs(row).max() >= 0.01:
            weights[str(name)] = [round(float(v), 3) for v in row]
    return {"labels": [str(c) for c in clf.classes_], "bias": [round(float(b), 4) for b in clf.intercept_],
            "weights": weights}
