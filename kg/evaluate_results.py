"""Reported-results quality on kg-gold results dev, exactly as its score_results.py computes it, and the simple
baseline ``kg eval`` runs beside the shipped extractor."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from kg.evaluate_gold import gold_key
from kg.extract.results import value_spans
from kg.extract.types import Extraction, Result

LEVELS: dict[str, tuple[str, ...]] = {"value": (), "value+kind": ("kind",), "value+dataset": ("dataset",),
                                      "full": ("kind", "system", "dataset", "metric")}
_NUM = re.compile(r"\d+(?:[.,]\d+)?|\.\d+")


def _num(v: str | None) -> float | None:
    m = _NUM.search(v or "")
    return float(m.group(0).replace(",", ".")) if m else None


def _same(g: dict[str, Any], p: dict[str, Any], fields: tuple[str, ...]) -> bool:
    def k(x: str | None) -> str | None:
        return None if x is None else gold_key(x)
    return all((g.get(f) == p.get(f)) if f == "kind" else k(g.get(f)) == k(p.get(f)) for f in fields)


def score_results(gold: Sequence[dict[str, Any]], pred: Sequence[list[dict[str, Any]]]
                  ) -> dict[str, dict[str, float | int]]:
    """P/R/F1 per level: one-to-one greedy matching on the number, then the level's fields (score_results.py)."""
    out: dict[str, dict[str, float | int]] = {}
    for level, fields in LEVELS.items():
        tp = ng = npred = 0
        for g, pr in zip(gold, pred, strict=True):
            gr = g.get("results", [])
            ng += len(gr)
            npred += len(pr)
            used: set[int] = set()
            for x in gr:
                for j, y in enumerate(pr):
                    if j not in used and _num(x.get("value")) == _num(y.get("value")) and _same(x, y, fields):
                        used.add(j)
                        tp += 1
                        break
        p = tp / npred if npred else 0.0
        r = tp / ng if ng else 0.0
        out[level] = {"p": round(100 * p, 1), "r": round(100 * r, 1),
                      "f1": round(200 * p * r / (p + r), 1) if p + r else 0.0, "gold": ng, "pred": npred}
    return out


_PERF = re.compile(r"accura|F1|BLEU|ROUGE|error|score|precision|recall|AUC|mAP|IoU|success|improv|outperform|"
                   r"faster|speed|reduc|gain|achiev|perplexity|FID|rate|win", re.I)
_GAIN = re.compile(r"\b(?:by|improv\w*|outperform\w*|faster|speedup|speed-up|reduc\w*|gains?|increas\w*|"
                   r"decreas\w*|boost\w*|higher|lower|better|fewer|less|more)\b", re.I)


def baseline_results(text: str, x: Extraction) -> list[Result]:
    """The floor: a number with ``%`` or ``×`` in a sentence with a performance word is a result; a gain when a
    comparison word ("by", "improves", "faster") is near it or it is a ratio, else a score; its metric and dataset
    the nearest metric and dataset mentions in its sentence, its system the paper's first proposed entity."""
    starts = [s for s, _ in x.sentences]
    proposed = next(((m.start, m.end) for m in x.entities if m.proposed), None)
    out = []
    for s, e in value_spans(text):
        v = text[s:e]
        if not any(c in v for c in "%×xX"):
            continue
        si = max(0, bisect_right(starts, s) - 1)
        ss, se = x.sentences[si] if x.sentences else (0, len(text))
        if not _PERF.search(text[ss:se]):
            continue
        kind = "gain" if (v.rstrip()[-1] in "×xX" or _GAIN.search(text[max(ss, s - 40) : s])) else "score"

        def nearest(ty: str, s: int = s, ss: int = ss, se: int = se) -> tuple[int, int] | None:
            ms = [(m.start, m.end) for m in x.entities if m.type == ty and ss <= m.start < se]
            return min(ms, key=lambda m: abs(m[0] - s)) if ms else None

        out.append(Result(s, e, kind, si, proposed, nearest("dataset"), nearest("metric")))
    return out
