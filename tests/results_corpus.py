"""A small hand-made corpus with reported results (issue 34), for the graph, store, leaderboard, API and view tests:
extractions written by hand, so the tests do not depend on what an extractor finds.

    kg2024a  GraphZip: 92.3% accuracy on GSM8K, an MRR of 0.412 on FB15k-237, 3.2x faster (a gain, no dataset)
    kg2025b  TinyMath (proposed; "our model" names no system): 94.1% accuracy on GSM8K; GraphZip 91.0% there;
             a 4.5% gain in accuracy
    kg2025c  SlowNet: 89.5% accuracy and an error rate of 5.9% on GSM-8K (no mention names the dataset or the
             metrics: the results' own spans do), 93.0% top-1 accuracy, a NoveltyScore of 3.1 (unknown metric)
    kg2024d  no results, mentions GSM8K
"""

from __future__ import annotations

import re

from kg.extract.types import Extraction, Mention, Result
from kg.graph import PaperInput
from kg.readers import PaperRecord

ABSTRACTS = {
    "kg2024a": ("We propose GraphZip, a graph compression method. GraphZip achieves 92.3% accuracy on GSM8K and an "
                "MRR of 0.412 on FB15k-237. It is 3.2× faster than FlashAttention.", 2024, "GraphZip"),
    "kg2025b": ("We introduce TinyMath, a small reasoning model. Our model reaches 94.1% accuracy on GSM8K, while "
                "GraphZip reaches 91.0% accuracy. TinyMath improves accuracy by 4.5% over the baseline.", 2025,
                "TinyMath"),
    "kg2025c": ("We propose SlowNet for math word problems. SlowNet reaches 89.5% accuracy and an error rate of 5.9% "
                "on GSM-8K. Its top-1 accuracy is 93.0% on GSM8K, with a NoveltyScore of 3.1 on GSM8K.", 2025,
                "SlowNet"),
    "kg2024d": ("We study how large language models solve GSM8K problems <b>step</b> by step.", 2024, None),
}


def span(text: str, sub: str, nth: int = 0) -> tuple[int, int]:
    """The ``nth`` occurrence of ``sub`` in ``text``, as (start, end)."""
    starts = [m.start() for m in re.finditer(re.escape(sub), text)]
    return starts[nth], starts[nth] + len(sub)


def sentences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S[^.]*(?:\.\d+[^.]*)*\.?", text) if m.group().strip()]


def _sent(sents: list[tuple[int, int]], start: int) -> int:
    return next(i for i, (s, e) in enumerate(sents) if s <= start < e)


def _mention(text: str, sents: list[tuple[int, int]], sub: str, type_: str, nth: int = 0,
             proposed: bool = False) -> Mention:
    s, e = span(text, sub, nth)
    return Mention(s, e, sub, type_, sent=_sent(sents, s), proposed=proposed)


def _result(text: str, sents: list[tuple[int, int]], value: str, kind: str, system: tuple[str, int] | None,
            dataset: tuple[str, int] | None, metric: tuple[str, int] | None, nth: int = 0) -> Result:
    s, e = span(text, value, nth)
    return Result(s, e, kind, _sent(sents, s), span(text, *system) if system else None,
                  span(text, *dataset) if dataset else None, span(text, *metric) if metric else None)


def _extraction(pid: str) -> Extraction:
    text = ABSTRACTS[pid][0]
    ss = sentences(text)
    m = lambda sub, ty, nth=0, proposed=False: _mention(text, ss, sub, ty, nth, proposed)  # noqa: E731
    r = lambda *a, **k: _result(text, ss, *a, **k)  # noqa: E731
    if pid == "kg2024a":
        return Extraction(entities=[m("GraphZip", "method", 0, True), m("GraphZip", "method", 1),
                                    m("accuracy", "metric"), m("GSM8K", "dataset"), m("MRR", "metric"),
                                    m("FB15k-237", "dataset"), m("FlashAttention", "method")],
                          sentences=ss,
                          results=[r("92.3%", "score", ("GraphZip", 1), ("GSM8K", 0), ("accuracy", 0)),
                                   r("0.412", "score", ("GraphZip", 1), ("FB15k-237", 0), ("MRR", 0)),
                                   r("3.2×", "gain", ("GraphZip", 0), None, None)])
    if pid == "kg2025b":
        return Extraction(entities=[m("TinyMath", "model", 0, True), m("accuracy", "metric"), m("GSM8K", "dataset"),
                                    m("GraphZip", "method"), m("accuracy", "metric", 1),
                                    m("TinyMath", "model", 1), m("accuracy", "metric", 2)],
                          sentences=ss,
                          results=[r("94.1%", "score", None, ("GSM8K", 0), ("accuracy", 0)),
                                   r("91.0%", "score", ("GraphZip", 0), ("GSM8K", 0), ("accuracy", 1)),
                                   r("4.5%", "gain", ("TinyMath", 1), None, ("accuracy", 2))])
    if pid == "kg2025c":
        return Extraction(entities=[m("SlowNet", "method", 0, True), m("math word problems", "task"),
                                    m("SlowNet", "method", 1)],
                          sentences=ss,
                          results=[r("89.5%", "score", ("SlowNet", 1), ("GSM-8K", 0), ("accuracy", 0)),
                                   r("5.9%", "score", ("SlowNet", 1), ("GSM-8K", 0), ("error rate", 0)),
                                   r("93.0%", "score", ("SlowNet", 1), ("GSM8K", 0), ("top-1 accuracy", 0)),
                                   r("3.1", "score", ("SlowNet", 1), ("GSM8K", 1), ("NoveltyScore", 0))])
    return Extraction(entities=[m("large language models", "model"), m("GSM8K", "dataset")], sentences=ss)


def results_inputs(with_results: bool = True) -> dict[str, PaperInput]:
    """The corpus as PaperInputs by id (``with_results=False``: the same extractions without their results)."""
    out = {}
    for pid, (text, year, _) in ABSTRACTS.items():
        ext = _extraction(pid)
        if not with_results:
            ext.results = []
        out[pid] = PaperInput(PaperRecord(id=pid, abstract=text, title=f"Paper {pid}", year=year, venue="ICML"), ext)
    return out
