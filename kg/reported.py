"""Reported results in the graph (issue 34): a value as written parsed into a number and its unit, and the
mentions that name each result's system, dataset and metric.

A result's system, dataset and metric are spans of the abstract (``kg.extract.types.Result``). Each becomes a
link to an entity the way every mention does: through the paper's own mention of the same name (same canonical
key, the one covering the span first) when there is one, else through a mention made here for the span, so that
the corpus's entity resolution (``kg.resolve``) decides what one dataset or one metric is, and a dataset named
only in a result still gets its node (and the paper its ``EVALUATES_ON`` edge, the result's sentence as evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kg.canon import canonical_key
from kg.extract.types import Extraction, Mention, Result

Unit = Literal["percent", "ratio", "number"]
RESULT_LABEL = "Result"  # (:Paper)-[:REPORTS]->(:Result)-[:ACHIEVED_BY|ON_DATASET|IN_METRIC]->(entity)
SLOT_TYPES = {"system": "method", "dataset": "dataset", "metric": "metric"}  # the type a slot's own mention gets
RESULT_EDGES = {"system": "ACHIEVED_BY", "dataset": "ON_DATASET", "metric": "IN_METRIC"}
RESULT_EDGE_TYPES = ("REPORTS", "ACHIEVED_BY", "ON_DATASET", "IN_METRIC")

_NUMBER = re.compile(r"[-+\u2212]?(?:\d[\d,\u2009\u202f ]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_RATIO = re.compile(r"^(?:[\u00d7xX]\s*\S|\S.*?\s*[\u00d7xX]$)")


def parse_value(text: str) -> tuple[float | None, Unit]:
    """The number a value as written holds, and its unit: ``92.3%`` -> (92.3, percent), ``1,024`` -> (1024,
    number), ``3.2×`` or ``7x`` -> (3.2 or 7, ratio), ``0,5`` -> 0.5; (None, number) when it holds no number."""
    s = text.strip()
    unit: Unit = "percent" if "%" in s or "\uff05" in s else "ratio" if _RATIO.match(s) else "number"
    m = _NUMBER.search(s)
    if m is None:
        return None, unit
    num = re.sub(r"[\u2009\u202f ]", "", m.group()).replace("\u2212", "-").rstrip(",")
    digits = num.lstrip("+-")
    if "," in digits:
        # "1,024" and "12,345.6" group thousands; a lone comma before one or two digits ("0,5") is a decimal point.
        if _THOUSANDS.match(digits):
            num = num.replace(",", "")
        elif digits.count(",") == 1 and "." not in digits:
            num = num.replace(",", ".")
        else:
            num = num.replace(",", "")
    try:
        value = float(num)
    except ValueError:
        return None, unit
    return (value if value == value and abs(value) != float("inf") else None), unit


@dataclass(slots=True)
class SlotLinks:
    """Per result of a paper: the index (into the extended mentions) of the mention naming its system, dataset
    and metric, or None."""

    system: int | None
    dataset: int | None
    metric: int | None


def _sentence_of(ext: Extraction, start: int, fallback: int) -> int:
    for i, (s, e) in enumerate(ext.sentences):
        if s <= start < e:
            return i
    return fallback


def with_result_mentions(ext: Extraction, text: str) -> tuple[Extraction, list[SlotLinks]]:
    """``ext`` with a mention added for each result slot no mention of the paper names (same canonical key),
    and each result's slot mentions. An extraction without results is returned as it is (the same object)."""
    if not ext.results:
        return ext, []
    mentions = list(ext.entities)
    by_key: dict[str, list[int]] = {}
    for i, m in enumerate(mentions):
        by_key.setdefault(canonical_key(m.text), []).append(i)
    made: dict[tuple[int, int, str], int] = {}

    def link(span: tuple[int, int] | None, slot: str, r: Result) -> int | None:
        if span is None:
            return None
        s, e = span
        if not 0 <= s < e <= len(text):
            return None
        surface = text[s:e]
        key = canonical_key(surface)
        if not key:
            return None
        same = by_key.get(key, [])
        if same:  # the mention covering the span, else the paper's first mention of the name
            covering = [i for i in same if mentions[i].start < e and s < mentions[i].end]
            return (covering or same)[0]
        ty = SLOT_TYPES[slot]
        i = made.get((s, e, ty))
        if i is None:
            i = made[(s, e, ty)] = len(mentions)
            mentions.append(Mention(s, e, surface, ty, sent=_sentence_of(ext, s, r.sent)))
        return i

    links = [SlotLinks(link(r.system, "system", r), link(r.dataset, "dataset", r), link(r.metric, "metric", r))
             for r in ext.results]
    if len(mentions) == len(ext.entities):
        return ext, links
    return Extraction(entities=mentions, relations=ext.relations, sentences=ext.sentences,
                      abbreviations=ext.abbreviations, results=ext.results), links


def result_name(value: str, metric: str | None, system: str | None, dataset: str | None) -> str:
    """A result's display name: ``GraphZip: 0.412 MRR on FB15k-237``."""
    out = value + (f" {metric}" if metric else "") + (f" on {dataset}" if dataset else "")
    return f"{system}: {out}" if system else out
