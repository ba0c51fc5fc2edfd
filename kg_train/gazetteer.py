"""Building the gazetteer (kg.extract.gazetteer): train names with one type, phrases annotators leave out."""

from __future__ import annotations

import json
from pathlib import Path

from kg.extract.gazetteer import MAX_ANNOTATED, MIN_PAPERS, MIN_SEEN, TYPE_SHARE


def build_gazetteer(annotated: list[dict[str, str]], seen: list[set[str]], out: Path) -> None:
    """``annotated[i]``: key -> gold type in train abstract i; ``seen[i]``: keys of its noun phrases."""
    from collections import Counter

    by_type: dict[str, Counter] = {}
    n_ann: Counter = Counter()
    n_seen: Counter = Counter()
    for ann, phrases in zip(annotated, seen, strict=True):
        for k, t in ann.items():
            by_type.setdefault(k, Counter())[t] += 1
            n_ann[k] += 1
        for k in phrases | set(ann):
            n_seen[k] += 1
    types = {}
    for k, c in by_type.items():
        t, n = c.most_common(1)[0]
        total = sum(c.values())
        if total >= MIN_PAPERS and n / total >= TYPE_SHARE:
            types[k] = t
    not_entities = sorted(k for k, n in n_seen.items() if n >= MIN_SEEN and n_ann[k] <= MAX_ANNOTATED * n)
    out.write_text(json.dumps({"types": dict(sorted(types.items())), "not_entities": not_entities}, indent=0),
                   encoding="utf-8")
    print(f"gazetteer: {len(types)} typed names, {len(not_entities)} phrases left out")
