"""Names as kg-gold train types them, and phrases its annotators leave out (gazetteer.json, by train_gold.py).

Careful annotators give a name one type across papers (`large language models` a model, `reinforcement learning`
a method) and leave generic phrases out (`real-world applications`, `extensive experiments`). From kg-gold
train: each annotated name's key with its type when at least MIN_PAPERS abstracts annotate it and one type has
at least TYPE_SHARE of them; and keys of noun phrases that occur in many train abstracts but are annotated in
few of them. The extractor uses the first to type a span (corpus-level one type per name) and the second to drop
one.
"""

from __future__ import annotations

import json
from pathlib import Path

MIN_PAPERS = 2
TYPE_SHARE = 0.75
MIN_SEEN = 4  # a phrase is dropped when seen in this many train abstracts ...
MAX_ANNOTATED = 0.1  # ... and annotated in at most this share of them


class Gazetteer:
    def __init__(self, data: dict) -> None:
        self.types: dict[str, str] = data["types"]
        self.not_entities: set[str] = set(data["not_entities"])

    @classmethod
    def load(cls, path: Path) -> Gazetteer:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def type_of(self, key: str) -> str | None:
        return self.types.get(key)

    def is_entity(self, key: str) -> bool:
        return key not in self.not_entities
