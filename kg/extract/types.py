"""Backend-neutral results of extraction: mentions, relations, reported results and the abbreviations a text
defines."""

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


RESULT_KINDS = ("score", "gain")


@dataclass(slots=True)
class Result:
    """A reported result ("92.3% accuracy on GSM8K"): the number as written and what it measures.

    Offsets are Python string offsets into the original text, end exclusive; ``system``, ``dataset`` and
    ``metric`` are ``(start, end)`` of the text naming each, or ``None`` when the abstract does not say. A system
    the abstract names elsewhere (the paper's contribution, when a sentence says only "our method") points there.
    """

    start: int  # the value
    end: int
    kind: str  # "score" (a level reached) or "gain" (a difference or ratio)
    sent: int = 0  # index into Extraction.sentences: the value's sentence
    system: tuple[int, int] | None = None
    dataset: tuple[int, int] | None = None
    metric: tuple[int, int] | None = None

    def texts(self, text: str) -> dict[str, Any]:
        """The ``kg extract`` contract (the kg-gold results schema): texts as written, ``None`` when unstated."""
        def t(span: tuple[int, int] | None) -> str | None:
            return None if span is None else text[span[0] : span[1]]
        return {"value": text[self.start : self.end], "kind": self.kind, "system": t(self.system),
                "dataset": t(self.dataset), "metric": t(self.metric)}

    def to_store(self) -> list[Any]:
        def sp(span: tuple[int, int] | None) -> list[int] | None:
            return None if span is None else [span[0], span[1]]
        return [self.start, self.end, self.kind, self.sent, sp(self.system), sp(self.dataset), sp(self.metric)]

    @classmethod
    def from_store(cls, row: list[Any]) -> Result:
        s, e, kind, sent, sy, ds, me = row
        def sp(x: list[int] | None) -> tuple[int, int] | None:
            return None if x is None else (int(x[0]), int(x[1]))
        return cls(int(s), int(e), str(kind), int(sent), sp(sy), sp(ds), sp(me))


@dataclass(slots=True)
class Extraction:
    """Everything extraction found in one text."""

    entities: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)  # original offsets, end exclusive
    abbreviations: list[tuple[str, str]] = field(default_factory=list)  # (short, long) as written
    results: list[Result] = field(default_factory=list)

    def to_contract(self, doc_id: Any, text: str | None = None) -> dict[str, Any]:
        """The ``kg extract`` output line; ``text`` (the abstract as given) adds the results' texts."""
        out: dict[str, Any] = {
            "id": doc_id,
            "entities": [m.to_json() for m in self.entities],
            "relations": [{"head": r.head, "tail": r.tail, "type": r.type} for r in self.relations],
        }
        if text is not None:
            out["results"] = [r.texts(text) for r in self.results]
        return out

    def to_store(self) -> dict[str, Any]:
        """Compact form kept in the store so the graph can be re-derived without re-parsing."""
        return {
            "m": [[m.start, m.end, m.text, m.type, m.sent, int(m.proposed), m.short_form_of] for m in self.entities],
            "r": [[r.head, r.tail, r.type] for r in self.relations],
            "s": [list(s) for s in self.sentences],
            "a": [list(a) for a in self.abbreviations],
            "v": [r.to_store() for r in self.results],
        }

    @classmethod
    def from_store(cls, data: dict[str, Any]) -> Extraction:
        return cls(
            entities=[Mention(s, e, t, ty, se, bool(p), sf) for s, e, t, ty, se, p, sf in data["m"]],
            relations=[Relation(h, t, ty) for h, t, ty in data["r"]],
            sentences=[(s, e) for s, e in data["s"]],
            abbreviations=[(a, b) for a, b in data["a"]],
            results=[Result.from_store(r) for r in data.get("v", ())],  # stores before results have none
        )
