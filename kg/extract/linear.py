"""Multinomial logistic regression shipped as plain JSON weights: scoring at run time, fitting at training time.

The relation, cross-sentence relation and span models share it: {"labels": [...], "bias": [...], "weights":
{feature: [..per label..]}} plus each model's own thresholds. No pickle, no scikit-learn at run time.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Self


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


class LinearModel:
    """Loaded weights: ``labels``, ``probs(features)``, and ``_none``, the index of the "no label" label
    (``NONE``); subclasses read their own thresholds from the same JSON."""

    NONE = "NONE"

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        self.labels: list[str] = data["labels"]
        self._none = self.labels.index(self.NONE)

    @classmethod
    def load(cls, path: Path) -> Self:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def probs(self, feats: list[str]) -> list[float]:
        return softmax_probs(self._data, feats)


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
