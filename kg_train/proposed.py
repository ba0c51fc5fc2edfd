"""Training the proposed-entity classifier (kg.extract.propmodel) on the gold ``proposed`` flags."""

from __future__ import annotations

import json
from pathlib import Path


def train_proposed_model(examples: list[tuple[set[str], bool]], out: Path, *, seed: int = 0, C: float = 0.5,
                         threshold: float = 0.5) -> None:
    """Fit on (features, proposed?) per gold entity; needs scikit-learn."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = DictVectorizer()
    M = vec.fit_transform([dict.fromkeys(f, 1) for f, _ in examples])
    y = [int(lab) for _, lab in examples]
    clf = LogisticRegression(C=C, max_iter=500, random_state=seed)
    clf.fit(M, y)
    weights = {str(n): round(float(w), 4) for n, w in zip(vec.get_feature_names_out(), clf.coef_[0], strict=True)
               if abs(w) >= 0.005}
    data = {"bias": round(float(clf.intercept_[0]), 4), "weights": weights, "threshold": threshold}
    out.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    print(f"proposed model: {len(examples)} entities ({sum(y)} proposed), {len(weights)} features")
