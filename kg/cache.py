"""An append-only log of extractions keyed by record content, so builds resume and re-builds re-use work."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from kg.extract.types import Extraction
from kg.graph import PaperInput
from kg.readers import PaperRecord


def record_hash(r: PaperRecord) -> str:
    """Content hash of everything a record contributes to the graph."""
    parts: list[object] = [r.id, r.title, r.abstract, r.year, r.venue, r.authors]
    if r.published is not None:  # only then: records without a date keep the hashes they always had
        parts.append(r.published)
    data = orjson.dumps(parts)
    return hashlib.sha1(data).hexdigest()[:20]


def _input(obj: dict[str, Any]) -> PaperInput:
    """A log line's record and extraction."""
    return PaperInput(PaperRecord(**obj["r"]), Extraction.from_store(obj["x"]))


class ExtractionCache:
    """``inputs.jsonl``: one line per extracted record. A torn last line (a killed build) is ignored."""

    def __init__(self, path: Path, version: str) -> None:
        self.path = path
        self.version = version

    def load(self, wanted: set[str]) -> dict[str, PaperInput]:
        """This extractor version's cached inputs for the ``wanted`` record hashes, by hash."""
        out: dict[str, PaperInput] = {}
        for _, obj in self._entries():
            if obj["h"] in wanted and obj.get("v") == self.version:
                try:
                    out[obj["h"]] = _input(obj)
                except (AttributeError, KeyError, TypeError, ValueError):
                    continue  # a damaged line: that record is extracted again
        return out

    def _entries(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(file offset, decoded line) of every readable line; torn or damaged lines are skipped."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            offset = 0
            for line in fh:
                try:
                    obj = orjson.loads(line)
                    if isinstance(obj, dict) and isinstance(obj.get("h"), str):
                        yield offset, obj
                except orjson.JSONDecodeError:
                    pass
                offset += len(line)

    def hashes(self) -> set[str]:
        """Hashes of the records extracted with this extractor version (what a build can re-use)."""
        return {obj["h"] for _, obj in self._entries() if obj.get("v") == self.version}

    def offsets(self, wanted: set[str]) -> dict[str, int]:
        """File offset of each wanted hash's entry: this version's when there is one, else the newest other."""
        out: dict[str, int] = {}
        current: set[str] = set()
        for off, obj in self._entries():
            h = obj["h"]
            if h in wanted and (h not in current):
                out[h] = off
                if obj.get("v") == self.version:
                    current.add(h)
        return out

    def append(self, items: Iterable[tuple[str, PaperInput]]) -> None:
        """Append and flush to disk: what was extracted survives a kill. (orjson writes a record, a dataclass,
        as the dict of its fields: the same bytes as ``asdict`` at a fraction of the cost.)"""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as fh:
            # A build killed mid-write leaves a torn last line; end it, or the next record would be glued
            # onto it and lost with it (and a graph saved with that record could not be re-derived).
            if fh.seek(0, os.SEEK_END) and (fh.seek(-1, os.SEEK_END), fh.read(1))[1] != b"\n":
                fh.write(b"\n")
            for h, p in items:
                fh.write(orjson.dumps({"h": h, "v": self.version, "r": p.record,
                                       "x": p.extraction.to_store()}) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())

    def rewrite(self, items: dict[str, PaperInput]) -> None:
        """Replace the log with exactly ``items`` (drops stale entries), atomically."""
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            for h, p in sorted(items.items()):
                fh.write(orjson.dumps({"h": h, "v": self.version, "r": p.record,
                                       "x": p.extraction.to_store()}) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)


class CachedInputs(Mapping[str, PaperInput]):
    """Papers by id, read from the extraction log when asked for: only ids, hashes and file offsets stay in
    memory, so deriving the graph of a large corpus never holds every extraction at once."""

    def __init__(self, cache: ExtractionCache, hashes: Mapping[str, str]) -> None:
        self.cache = cache
        self.hashes = dict(hashes)  # paper id -> record hash
        self._offsets = cache.offsets(set(self.hashes.values()))
        missing = [pid for pid, h in self.hashes.items() if h not in self._offsets]
        if missing:
            from kg.errors import StoreError

            raise StoreError(f"{cache.path}: extractions for {len(missing)} papers are missing (e.g. {missing[0]}); "
                             f"rebuild from the original input into a new store")
        self._fh = open(cache.path, "rb") if self.hashes else None  # noqa: SIM115 - closed with the mapping

    def __getitem__(self, pid: str) -> PaperInput:
        assert self._fh is not None
        self._fh.seek(self._offsets[self.hashes[pid]])
        return _input(orjson.loads(self._fh.readline()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
