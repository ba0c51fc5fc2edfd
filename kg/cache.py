"""An append-only log of extractions keyed by record content, so builds resume and re-builds re-use work.

One JSON line per extracted record: ``{"h": content hash, "v": extractor version, "z": ..., "c": ...}``, where
``z`` is the record and its extraction (``{"r": record, "x": extraction}`` as JSON), compressed with raw DEFLATE
and a fixed preset dictionary (``LOG_DICT``), in base64, and ``c`` the CRC-32 of that JSON (raw DEFLATE has no
checksum: a damaged line could otherwise decode to another record), checked whenever the line is read (lines
written before it have none, and are read unchecked). Each line is compressed on its own, so a line is still read
by seeking to its offset, and a torn last line (a killed build) is still just a line that does not parse. Logs
written by kg before that hold ``"r"`` and ``"x"`` in the line itself; they are read alike, and ``compact``
rewrites them (``kg upgrade``, or the build that upgrades a store).
"""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from kg.extract.types import Extraction
from kg.files import open_regular
from kg.graph import PaperInput
from kg.readers import PaperRecord


def record_hash(r: PaperRecord) -> str:
    """Content hash of everything a record contributes to the graph."""
    parts: list[object] = [r.id, r.title, r.abstract, r.year, r.venue, r.authors]
    if r.published is not None:  # only then: records without a date keep the hashes they always had
        parts.append(r.published)
    data = orjson.dumps(parts)
    return hashlib.sha1(data).hexdigest()[:20]


# What extraction logs repeat: their JSON's shape, and words common in abstracts. DEFLATE finds repeats within
# 32 KB back; a preset dictionary gives a 3 KB line some before its own text starts (7.3 MB instead of 8.5 MB
# for 5,000 arXiv abstracts, 15 MB uncompressed). Fixed: every line of every log is read with it, so it never
# changes; another dictionary would need another key than "z".
LOG_DICT = (
    b"the of and to in a is for we that on with as by this our are from an be which can model models learning "
    b"language large neural network networks data method methods approach results performance training propose "
    b"proposed paper task tasks framework based state-of-the-art experiments demonstrate show existing while "
    b"however using such these it has have or also both novel new achieves outperforms significantly benchmark "
    b"datasets dataset evaluation accuracy information generation reasoning agents multimodal vision inference "
    b"deep reinforcement graph knowledge text image images video robust efficient optimization In this paper, we "
    b"propose Large language models (LLMs) have  In this work, we "
    b'{"r":{"id":"arXiv:2401.00001","abstract":"","title":"","year":2024,"venue":"arXiv","authors":["",""],'
    b'"source":".jsonl:1","published":"2024-01-01"},"x":{"m":[[0,0,"","method",0,0,null],[0,0,"","task",0,0,null],'
    b'[0,0,"","concept",0,0,null],[0,0,"","model",0,0,null],[0,0,"","dataset",0,0,null],'
    b'[0,0,"","metric",0,0,null]],"r":[[0,1,"USED_FOR"],[0,1,"EVALUATED_ON"],[0,1,"COMPARED_WITH"],'
    b'[0,1,"PART_OF"],[0,1,"IS_A"]],"s":[[0,100],[101,200]],"a":[["",""]]}}'
)
_WBITS = -15  # raw DEFLATE: the line's JSON already tells a damaged line from a whole one
_PRIMED = zlib.compressobj(6, zlib.DEFLATED, _WBITS, zdict=LOG_DICT)


def _line(h: str, version: str | None, body: bytes) -> bytes:
    """A log line for ``body`` (the JSON of ``{"r": record, "x": extraction}``), with the CRC-32 of ``body``."""
    c = _PRIMED.copy()  # a copy of a primed compressor: cheaper than loading the dictionary again
    z = base64.b64encode(c.compress(body) + c.flush()).decode()
    return orjson.dumps({"h": h, "v": version, "z": z, "c": zlib.crc32(body)}) + b"\n"


def _encode(h: str, version: str, p: PaperInput) -> bytes:
    # orjson writes a record, a dataclass, as the dict of its fields: the same bytes as ``asdict``, far faster
    return _line(h, version, orjson.dumps({"r": p.record, "x": p.extraction.to_store()}))


def _body(obj: dict[str, Any]) -> dict[str, Any]:
    """A log line's ``{"r": record, "x": extraction}``, as JSON values."""
    if "z" in obj:
        body = zlib.decompressobj(_WBITS, zdict=LOG_DICT).decompress(base64.b64decode(obj["z"]))
        if "c" in obj and zlib.crc32(body) != obj["c"]:  # raw DEFLATE has no checksum of its own
            raise ValueError("checksum")
        obj = orjson.loads(body)
    return obj


def _input(obj: dict[str, Any]) -> PaperInput:
    """A log line's record and extraction."""
    obj = _body(obj)
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
                except (AttributeError, KeyError, TypeError, ValueError, zlib.error):
                    continue  # a damaged line: that record is extracted again
        return out

    def _entries(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(file offset, decoded line) of every readable line; torn or damaged lines are skipped."""
        if not self.path.exists():
            return
        with open_regular(self.path) as fh:
            offset = 0
            for line in fh:
                try:
                    obj = orjson.loads(line)
                    if isinstance(obj, dict) and isinstance(obj.get("h"), str):
                        yield offset, obj
                except orjson.JSONDecodeError:
                    pass
                offset += len(line)

    def latest_papers(self) -> dict[str, str]:
        """Paper id -> record hash of the last readable line for each paper: the papers a store whose snapshot is
        damaged is derived again from (a build appends a paper's line when its text changes, so the last line
        is the paper as last built)."""
        out: dict[str, str] = {}
        for _, obj in self._entries():
            try:
                pid = _body(obj)["r"]["id"]
            except (AttributeError, KeyError, TypeError, ValueError, zlib.error):
                continue  # a damaged line: that paper is not recovered from it
            if not isinstance(pid, str):
                continue
            out.pop(pid, None)  # kept in the order of their last lines
            out[pid] = obj["h"]
        return out

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
        """Append and flush to disk: what was extracted survives a kill."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as fh:
            # A build killed mid-write leaves a torn last line; end it, or the next record would be glued
            # onto it and lost with it (and a graph saved with that record could not be re-derived).
            if fh.seek(0, os.SEEK_END) and (fh.seek(-1, os.SEEK_END), fh.read(1))[1] != b"\n":
                fh.write(b"\n")
            for h, p in items:
                fh.write(_encode(h, self.version, p))
            fh.flush()
            os.fsync(fh.fileno())

    def compact(self) -> bool:
        """Rewrite the log with every line in the current, compressed encoding (each line's content as it was,
        whatever extractor version made it; torn lines dropped), atomically; False when no line needed it."""
        if not self.path.exists():
            return False
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        changed = False
        try:
            with open_regular(self.path) as src, open(tmp, "wb", buffering=1 << 20) as out:
                for line in src:
                    try:
                        obj = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        changed = True  # a torn or damaged line: never read, so not kept
                        continue
                    if isinstance(obj, dict) and isinstance(obj.get("h"), str) and "r" in obj and "x" in obj:
                        out.write(_line(obj["h"], obj.get("v"), orjson.dumps({"r": obj["r"], "x": obj["x"]})))
                        changed = True
                    else:
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                out.flush()
                os.fsync(out.fileno())
            if changed:
                os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        return changed


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
        self._fh = open_regular(cache.path) if self.hashes else None  # closed with the mapping

    def __getitem__(self, pid: str) -> PaperInput:
        assert self._fh is not None
        from kg.errors import StoreError

        offset = self._offsets[self.hashes[pid]]
        self._fh.seek(offset)
        try:
            return _input(orjson.loads(self._fh.readline()))
        except (ValueError, TypeError, KeyError, zlib.error) as exc:  # binascii.Error is a ValueError
            raise StoreError(f"{self._fh.name}: the extraction of {pid} (at byte {offset}) is damaged ({exc}); "
                             f"rebuild from the original input into a new store") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
