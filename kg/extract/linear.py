"""Multinomial logistic regression shipped as plain JSON weights: scoring at run time, fitting at training time.

The relation, cross-sentence relation and span models share it: {"labels": [...], "bias": [...], "weights":
{feature: [..per label..]}} plus each model's own thresholds. No pickle, no scikit-learn at run time.
"""

from __future__ import annotations

import json
import math
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
