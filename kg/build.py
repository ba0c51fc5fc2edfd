"""Build orchestration: read inputs, extract (re-using cached work), merge with the store, derive, save."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kg.cache import record_hash
from kg.extract.pipeline import Extractor
from kg.graph import PaperInput, derive_graph
from kg.models import Stats
from kg.readers import PaperRecord, Skip, read_papers
from kg.store.base import Store

BATCH = 64


@dataclass(slots=True)
class BuildSummary:
    read: int = 0
    extracted: int = 0
    reused: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    papers_before: int = 0
    stats: Stats | None = None
    seconds: float = 0.0


def _batches(items: Iterable[PaperRecord | Skip], n: int) -> Iterator[list[PaperRecord | Skip]]:
    batch: list[PaperRecord | Skip] = []
    for it in items:
        batch.append(it)
        if len(batch) >= n:
            yield batch
            batch = []
    if batch:
        yield batch


def build(paths: Iterable[str | os.PathLike[str]], store: Store, *,
          extractor: Callable[[], Extractor] = Extractor,
          on_skip: Callable[[Skip], None] = lambda s: print(f"kg: warning: {s.message()}", file=sys.stderr),
          on_progress: Callable[[int], None] | None = None) -> BuildSummary:
    """Ingest ``paths`` into ``store``; returns what happened. Inputs are streamed in batches."""
    t0 = time.perf_counter()
    summary = BuildSummary()
    existing = store.load_inputs()
    summary.papers_before = len(existing)
    cache = store.cache  # type: ignore[attr-defined]
    cached = cache.load()
    seen: dict[str, str] = {}
    new: dict[str, PaperInput] = {}
    ex: Extractor | None = None

    def skip(s: Skip) -> None:
        summary.skipped[s.reason] += 1
        on_skip(s)

    for batch in _batches(read_papers(paths), BATCH):
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
            if h in cached:
                new[item.id] = cached[h]
                summary.reused += 1
            else:
                todo.append((h, item))
        if todo:
            if ex is None:
                ex = extractor()
            done = [(h, PaperInput(r, x)) for (h, r), x in
                    zip(todo, ex.extract_many(r.abstract for _, r in todo), strict=True)]
            cache.append(done)  # survives a kill: a re-run resumes from here
            for h, p in done:
                new[p.record.id] = p
                cached[h] = p
            summary.extracted += len(done)
        if on_progress:
            on_progress(summary.read)

    merged = existing | new
    graph = derive_graph(merged.values())
    store.replace_graph(graph, merged)
    summary.stats = store.stats()
    summary.seconds = time.perf_counter() - t0
    return summary
