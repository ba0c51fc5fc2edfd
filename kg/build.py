"""Build orchestration: stream inputs, extract (re-using cached work, optionally in parallel), merge, derive, save."""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from kg.cache import CachedInputs, ExtractionCache, record_hash
from kg.extract.pipeline import Extractor
from kg.extract.types import Extraction
from kg.graph import PaperInput, derive_graph
from kg.models import Stats
from kg.procs import die_with_parent
from kg.readers import PaperRecord, Skip, read_papers
from kg.resolve import Overrides, keep_overrides, store_overrides
from kg.store.base import Store

log = logging.getLogger(__name__)

BATCH = 64
_LOCATION = re.compile(r":(?=\d+(?:\s|$)| entry \d)")


@dataclass(slots=True)
class BuildSummary:
    read: int = 0
    extracted: int = 0
    reused: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    papers_before: int = 0
    stats: Stats | None = None
    seconds: float = 0.0
    extract_seconds: float = 0.0
    derive_seconds: float = 0.0
    save_seconds: float = 0.0


# -- worker processes: each loads its own pipeline once ------------------------------------------------
_WORKER: Extractor | None = None


def _worker_init(factory: Callable[[], Extractor], parent_pid: int) -> None:
    global _WORKER
    die_with_parent(parent_pid)  # a killed build must not leave its workers extracting for minutes
    _WORKER = factory()


def _worker_extract(papers: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """Extractions of (abstract, title) pairs."""
    assert _WORKER is not None
    return [x.to_store() for x in _WORKER.extract_many((a for a, _ in papers), (t for _, t in papers))]


class _Parallel:
    """Extract batches in ``jobs`` processes, results in submission order, at most 2 x jobs batches in flight
    so a large corpus streams through instead of queueing in memory."""

    def __init__(self, jobs: int, factory: Callable[[], Extractor]) -> None:
        self.pool = ProcessPoolExecutor(jobs, mp_context=get_context("fork"), initializer=_worker_init,
                                        initargs=(factory, os.getpid()))
        self.window = 2 * jobs
        self.pending: deque[tuple[list[tuple[str, PaperRecord]], Future[list[dict[str, Any]]]]] = deque()

    def submit(self, todo: list[tuple[str, PaperRecord]]) -> Iterator[list[tuple[str, PaperInput]]]:
        self.pending.append((todo, self.pool.submit(_worker_extract, [(r.abstract, r.title) for _, r in todo])))
        while len(self.pending) >= self.window:
            yield self._pop()

    def drain(self) -> Iterator[list[tuple[str, PaperInput]]]:
        while self.pending:
            yield self._pop()

    def _pop(self) -> list[tuple[str, PaperInput]]:
        todo, fut = self.pending.popleft()
        return [(h, PaperInput(r, Extraction.from_store(x))) for (h, r), x in zip(todo, fut.result(), strict=True)]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _batches(items: Iterable[PaperRecord | Skip], n: int) -> Iterator[list[PaperRecord | Skip]]:
    batch: list[PaperRecord | Skip] = []
    for it in items:
        batch.append(it)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


class SkipWarnings:
    """Log skipped records as warnings (the CLI shows each as ``kg: warning: ...``), at most ``per_reason`` of
    each kind for each input file: a binary or badly damaged file would otherwise print a line per line of it,
    while distinct problems all show. ``finish`` then says how many more each file had, by kind."""

    def __init__(self, per_reason: int = 10) -> None:
        self.per_reason = per_reason
        self.shown: Counter[tuple[str, str]] = Counter()
        self.hidden: dict[str, Counter[str]] = {}

    def __call__(self, s: Skip) -> None:
        # "file:12", "file: entry 3", "refs.bib:22 (key)": the file is what comes before the location
        source = _LOCATION.split(s.where, maxsplit=1)[0]
        if self.shown[source, s.reason] < self.per_reason:
            self.shown[source, s.reason] += 1
            log.warning("%s", s.message())
        else:
            self.hidden.setdefault(source, Counter())[s.reason] += 1

    def finish(self) -> None:
        for source, reasons in self.hidden.items():
            kinds = ", ".join(f"{n:,} {reason}" for reason, n in reasons.most_common())
            log.warning("%s: %s more skipped records not shown (%s)", source, f"{sum(reasons.values()):,}", kinds)
        self.hidden.clear()


def build(paths: Iterable[str | os.PathLike[str]], store: Store, *,
          extractor: Callable[[], Extractor] = Extractor, jobs: int = 1,
          on_skip: Callable[[Skip], None] | None = None,
          on_progress: Callable[[int], None] | None = None,
          column_map: Mapping[str, str] | None = None, overrides: Overrides | None = None) -> BuildSummary:
    """Ingest ``paths`` into ``store``; returns what happened (``column_map``: CSV columns to fields;
    ``overrides``: entity-resolution corrections the store keeps from now on, in place of any it had).

    Records stream through in batches; each batch's extractions are appended to the store's extraction log
    before the next is read, so an interrupted build resumes where it stopped. The graph is derived from all
    of the store's papers and replaced in one step at the end.
    """
    t0 = time.perf_counter()
    warnings = SkipWarnings()  # reports the skips when the caller takes none
    report = on_skip or warnings
    summary = BuildSummary()
    existing = store.load_inputs()
    summary.papers_before = len(existing)
    cache: ExtractionCache = store.cache
    reusable = cache.hashes()  # only hashes: extractions stay on disk until the graph is derived
    seen: dict[str, str] = {}  # paper id -> record hash, for this build's papers
    serial: Extractor | None = None
    parallel = _Parallel(jobs, extractor) if jobs > 1 else None

    def skip(s: Skip) -> None:
        summary.skipped[s.reason] += 1
        report(s)

    def keep(done: list[tuple[str, PaperInput]]) -> None:
        cache.append(done)  # on disk before the next batch: a re-run resumes from here
        reusable.update(h for h, _ in done)
        summary.extracted += len(done)
        if on_progress:
            on_progress(summary.reused + summary.extracted)

    try:
        for batch in _batches(read_papers(paths, column_map=column_map), BATCH):
            todo: list[tuple[str, PaperRecord]] = []
            for item in batch:
                if isinstance(item, Skip):
                    skip(item)
                    continue
                summary.read += 1
                h = record_hash(item)
                if item.id in seen:
                    if seen[item.id] != h:
                        skip(Skip(item.source, "duplicate id with different text", f"id {item.id!r}; first kept"))
                    else:
                        summary.skipped["duplicate record"] += 1
                    continue
                seen[item.id] = h
                if h in reusable:
                    summary.reused += 1
                else:
                    todo.append((h, item))
            if not todo:
                if on_progress:
                    on_progress(summary.reused + summary.extracted)
                continue
            if parallel is not None:
                for done in parallel.submit(todo):
                    keep(done)
            else:
                serial = serial or extractor()
                keep([(h, PaperInput(r, x)) for (h, r), x in
                      zip(todo, serial.extract_many((r.abstract for _, r in todo), (r.title for _, r in todo)),
                          strict=True)])
        if parallel is not None:
            for done in parallel.drain():
                keep(done)
    finally:
        if parallel is not None:
            parallel.close()
        if on_skip is None:
            warnings.finish()
    t1 = time.perf_counter()
    summary.extract_seconds = t1 - t0

    if isinstance(existing, CachedInputs):
        merged: Mapping[str, PaperInput] = CachedInputs(cache, existing.hashes | seen)
        existing.close()
    else:  # a store that keeps extractions itself (Neo4j): this build's papers join them in memory
        with closing(CachedInputs(cache, seen)) as new:
            merged = dict(existing) | dict(new)
    try:
        folder = cache.path.parent
        kept = store_overrides(folder) if overrides is None else overrides
        graph = derive_graph(merged, embeddings=store.embeddings(), overrides=kept)
        t2 = time.perf_counter()
        if overrides is not None:
            keep_overrides(folder, overrides)  # before the graph: a Neo4j rebase re-derives with them
        store.replace_graph(graph, merged)
    finally:
        if isinstance(merged, CachedInputs):
            merged.close()
    t3 = time.perf_counter()
    summary.derive_seconds, summary.save_seconds = t2 - t1, t3 - t2
    summary.stats = store.stats()
    summary.seconds = time.perf_counter() - t0
    return summary


def count_records(paths: Iterable[str | os.PathLike[str]]) -> int | None:
    """A quick upper bound on the records in ``paths`` for progress and ETA (non-empty lines or paragraphs)."""
    from kg.readers import estimate_records, expand_paths

    total = 0
    try:
        for p in expand_paths(paths):
            total += estimate_records(p)
    except Exception:  # noqa: BLE001 - only an estimate; reading proper reports the real problem
        return None
    return total
