"""Backend-neutral results of extraction: mentions, relations and the abbreviations a text defines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RELATION_TYPES = ("USED_FOR", "EVALUATED_ON", "COMPARED_WITH", "PART_OF", "IS_A")


@dataclass(slots=True)
class Mention:
    """An entity mention; offsets are Python string offsets into the original text, end exclusive."""

    start: int
    end: int
    text: str
    type: str
    sent: int = 0  # index into Extraction.sentences
    proposed: bool = False
    short_form_of: str | None = None  # the long form, when this mention is a defined abbreviation

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text, "type": self.type}


@dataclass(slots=True)
class Relation:
    """A typed relation between two mentions of the same text (indexes into Extraction.entities)."""

    head: int
    tail: int
    type: str


@dataclass(slots=True)
class Extraction:
    """Everything extraction found in one text."""

    entities: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)  # original offsets, end exclusive
    abbreviations: list[tuple[str, str]] = field(default_factory=list)  # (short, long) as written

    def to_contract(self, doc_id: Any) -> dict[str, Any]:
        """The ``kg extract`` output line."""
        return {
            "id": doc_id,
            "entities": [m.to_json() for m in self.entities],
            "relations": [{"head": r.head, "tail": r.tail, "type": r.type} for r in self.relations],
        }

    def to_store(self) -> dict[str, Any]:
        """Compact form kept in the store so the graph can be re-derived without re-parsing."""
        return {
            "m": [[m.start, m.end, m.text, m.type, m.sent, int(m.proposed), m.short_form_of] for m in self.entities],
            "r": [[r.head, r.tail, r.type] for r in self.relations],
            "s": [list(s) for s in self.sentences],
            "a": [list(a) for a in self.abbreviations],
        }

    @classmethod
    def from_store(cls, data: dict[str, Any]) -> Extraction:
        return cls(
            entities=[Mention(s, e, t, ty, se, bool(p), sf) for s, e, t, ty, se, p, sf in data["m"]],
            relations=[Relation(h, t, ty) for h, t, ty in data["r"]],
            sentences=[(s, e) for s, e in data["s"]],
            abbreviations=[(a, b) for a, b in data["a"]],
        )
