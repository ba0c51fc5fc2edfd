"""Training the span filter (kg.extract.spanfilter) on train's gold mentions, the NER's spans and noun chunks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg.extract.spanfilter import NONE, span_features
from kg_train.fit import fit_softmax, save_model


def train_span_filter(examples: list[tuple[list[str], str]], out: Path, *, seed: int = 0, C: float = 0.5,
                      drop: float = 0.6, retype: float | None = 0.4) -> None:
    """Fit on (features, label) per span; needs scikit-learn."""
    from collections import Counter

    y = [lab for _, lab in examples]
    data = fit_softmax([fs for fs, _ in examples], y, C=C, min_count=2, seed=seed) | {"drop": drop, "retype": retype}
    save_model(data, out)
    print(f"span filter: {len(y)} spans ({Counter(y).most_common()}), {len(data['weights'])} features, "
          f"{out.stat().st_size / 1e6:.1f} MB")

def gold_examples(doc: Any, projected: list[tuple[int, int, str]], gold_types: dict[str, str],
                  key: Any) -> list[tuple[list[str], str]]:
    """Training spans of one train abstract parsed by the trained pipeline: the gold mentions ``projected``
    (start_char, end_char, type), then the NER's spans and the noun chunks (their gold type when ``key(text)``
    names a gold entity in ``gold_types``, else none)."""
    out, seen = [], set()

    def add(s: int, e: int, label: str | None) -> None:
        if (s, e) in seen:
            return
        seen.add((s, e))
        feats = span_features(doc, s, e)
        if feats:
            out.append((feats, label or gold_types.get(key(doc.text[s:e]), NONE)))

    for s, e, ty in projected:
        add(s, e, ty)
    for ent in doc.ents:
        add(ent.start_char, ent.end_char, None)
    for ch in doc.noun_chunks:
        toks = [t for t in ch if t.pos_ not in ("DET", "PRON", "PUNCT")]
        if toks:
            add(toks[0].idx, toks[-1].idx + len(toks[-1]), None)
    return out
