"""Measure extraction against the gold dev splits (SciERC, SciER): strict span+type micro P/R/F1, per type."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kg.extract.types import Extraction, Mention

if TYPE_CHECKING:
    from spacy.language import Language

# Gold label -> the kg types that count as a correct prediction of it.
SCIERC_TYPES = {"method": "Method", "model": "Method", "task": "Task", "metric": "Metric", "dataset": "Material",
                "concept": "OtherScientificTerm"}
SCIER_TYPES = {"method": "Method", "model": "Method", "dataset": "Dataset", "task": "Task"}
# SciERC relation labels mapped onto graph relations; (kg type, reversed?). Others are not scored.
SCIERC_RELATIONS = {"USED-FOR": ("USED_FOR", False), "EVALUATE-FOR": ("EVALUATED_ON", True),
                    "HYPONYM-OF": ("IS_A", False), "PART-OF": ("PART_OF", False), "COMPARE": ("COMPARED_WITH", False)}
SYMMETRIC = {"COMPARED_WITH"}
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


@dataclass
class Doc:
    """A gold document: text, entity spans (char offsets, gold label) and relations between them."""

    id: str
    text: str
    entities: list[tuple[int, int, str]]
    relations: list[tuple[tuple[int, int], tuple[int, int], str]] = field(default_factory=list)
    ignore: set[tuple[int, int]] = field(default_factory=set)  # Generic spans: neither right nor wrong


def load_scierc(path: Path) -> Iterator[Doc]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            tokens = [_PTB.get(t, t) for s in d["sentences"] for t in s]
            starts, pos = [], 0
            for t in tokens:
                starts.append(pos)
                pos += len(t) + 1
            text = " ".join(tokens)

            def span(s: int, e: int) -> tuple[int, int]:
                return starts[s], starts[e] + len(tokens[e])  # noqa: B023 - used within the iteration

            ents, ignore = [], set()
            for sent in d["ner"]:
                for s, e, label in sent:
                    (ignore.add(span(s, e)) if label == "Generic" else ents.append((*span(s, e), label)))
            rels = []
            for sent in d["relations"]:
                for s1, e1, s2, e2, label in sent:
                    if label in SCIERC_RELATIONS:
                        ty, rev = SCIERC_RELATIONS[label]
                        a, b = span(s1, e1), span(s2, e2)
                        rels.append((b, a, ty) if rev else (a, b, ty))
            yield Doc(d["doc_key"], text, ents, rels, ignore)


def load_scier(path: Path) -> Iterator[Doc]:
    """SciER gives mention strings, not offsets: each gold mention is matched to its first free occurrence."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            d = json.loads(line)
            text = d["sentence"]
            taken: set[int] = set()
            ents = []
            for mention, label in d["ner"]:
                i = text.find(mention)
                while i >= 0 and i in taken:
                    i = text.find(mention, i + 1)
                if i < 0:
                    continue
                taken.add(i)
                ents.append((i, i + len(mention), label))
            yield Doc(f"{d['doc_id']}-{n}", text, ents)


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def p(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def r(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.p * self.r / (self.p + self.r) if self.p + self.r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {"p": round(100 * self.p, 1), "r": round(100 * self.r, 1), "f1": round(100 * self.f1, 1),
                "tp": self.tp, "fp": self.fp, "fn": self.fn}


def score(docs: list[Doc], preds: Iterable[Extraction], type_map: dict[str, str]) -> dict[str, Score]:
    """Strict micro scores: overall (``ALL``), per gold type, and relations (``REL``: both argument spans and
    types and the relation type right). ``REL_SET_ASIDE.fn`` counts gold relations with a Generic argument."""
    out: dict[str, Score] = {"ALL": Score(), "REL": Score(), "REL_SET_ASIDE": Score()}
    for doc, pred in zip(docs, preds, strict=True):
        gold = Counter((s, e, t) for s, e, t in doc.entities)
        mapped = [(m.start, m.end, type_map[m.type]) for m in pred.entities if m.type in type_map]
        guess = Counter(x for x in mapped if (x[0], x[1]) not in doc.ignore)
        for key in set(gold) | set(guess):
            tp = min(gold[key], guess[key])
            for k in ("ALL", key[2]):
                s = out.setdefault(k, Score())
                s.tp += tp
                s.fp += guess[key] - tp
                s.fn += gold[key] - tp
        # Relations: every predicted relation counts, except one with an argument on a Generic span (Generic is
        # not scored, so neither is a relation of it: gold relations with a Generic argument are set aside too).
        gold_type = {(s, e): lab for s, e, lab in doc.entities}
        gr = Counter(_rel_key((a, gold_type[a]), (b, gold_type[b]), t) for a, b, t in doc.relations
                     if a in gold_type and b in gold_type)
        out["REL_SET_ASIDE"].fn += len(doc.relations) - sum(gr.values())
        pr: Counter = Counter()
        for r in pred.relations:
            h, t = pred.entities[r.head], pred.entities[r.tail]
            if (h.start, h.end) in doc.ignore or (t.start, t.end) in doc.ignore:
                continue
            a, b = ((h.start, h.end), type_map.get(h.type)), ((t.start, t.end), type_map.get(t.type))
            pr[_rel_key(a, b, r.type)] += 1
        rs = out["REL"]
        for key in set(gr) | set(pr):
            tp = min(gr[key], pr[key])
            rs.tp += tp
            rs.fp += pr[key] - tp
            rs.fn += gr[key] - tp
    return out


def _rel_key(a: tuple, b: tuple, ty: str) -> tuple:
    """A relation as (type, head, tail); each argument is (span, type); unordered for symmetric types."""
    return (ty, *sorted([a, b], key=repr)) if ty in SYMMETRIC else (ty, a, b)


class Runner(Protocol):
    """An extractor as ``kg eval`` runs it: texts (and their titles, aligned, None where a paper has none) in,
    one Extraction each out."""

    def __call__(self, texts: list[str], titles: list[str | None] | None = None) -> list[Extraction]: ...


def noun_chunk_baseline(nlp: Language) -> Runner:
    """Every noun chunk (leading determiners stripped) as a concept: the floor any extractor must beat."""
    def run(texts: list[str], titles: list[str | None] | None = None) -> list[Extraction]:
        out = []
        for doc in nlp.pipe(texts):
            ents = []
            for ch in doc.noun_chunks:
                toks = [t for t in ch if not (t.i == ch.start and t.pos_ in ("DET", "PRON"))]
                if toks:
                    s, e = toks[0].idx, toks[-1].idx + len(toks[-1])
                    ents.append(Mention(s, e, doc.text[s:e], "concept"))
            out.append(Extraction(entities=ents))
        return out
    return run


DATASETS = {"scierc": ("scierc/dev.json", load_scierc, SCIERC_TYPES),
            "scier": ("scier/dev.jsonl", load_scier, SCIER_TYPES)}
