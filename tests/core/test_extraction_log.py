"""The extraction log: each line compressed on its own, logs of an older kg read alike and compacted in place."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import orjson

from kg.cache import LOG_DICT, CachedInputs, ExtractionCache, record_hash
from kg.extract.types import Extraction
from kg.graph import PaperInput
from kg.readers import PaperRecord


def plain(log: Path) -> bytes:
    """The log as kg before compression wrote it: ``"r"`` and ``"x"`` in each line."""
    out = []
    for line in log.read_bytes().splitlines():
        obj = orjson.loads(line)
        body = orjson.loads(zlib.decompressobj(-15, zdict=LOG_DICT).decompress(base64.b64decode(obj.pop("z"))))
        out.append(orjson.dumps({**obj, **body}) + b"\n")
    return b"".join(out)


def inputs(n: int) -> list[tuple[str, PaperInput]]:
    recs = [PaperRecord(id=f"p{i}", abstract=f"We train large language models on dataset number {i}.",
                        title=f"Paper {i}", year=2024, authors=["Ada Lovelace"]) for i in range(n)]
    return [(record_hash(r), PaperInput(r, Extraction(sentences=[(0, len(r.abstract))]))) for r in recs]


def test_lines_are_compressed_and_read_back_as_written(tmp_path: Path) -> None:
    log = ExtractionCache(tmp_path / "inputs.jsonl", "v1")
    items = inputs(30)
    log.append(items)
    lines = log.path.read_bytes().splitlines()
    assert len(lines) == 30 and all(set(orjson.loads(x)) == {"h", "v", "z", "c"} for x in lines)
    assert b"large language models" not in log.path.read_bytes()
    assert log.load({h for h, _ in items}) == dict(items)
    by_id = CachedInputs(log, {p.record.id: h for h, p in items})
    assert [by_id[f"p{i}"] for i in range(30)] == [p for _, p in items]
    by_id.close()


def test_a_log_of_an_older_kg_is_read_alike_and_compacted(tmp_path: Path) -> None:
    log = ExtractionCache(tmp_path / "inputs.jsonl", "v1")
    items = inputs(12)
    log.append(items[:6])
    ExtractionCache(log.path, "v0").append(items[6:])  # lines of another extractor version are kept too
    old = plain(log.path)
    log.path.write_bytes(old + old.splitlines()[0][:40])  # and a torn last line, as a killed build leaves
    assert log.load({h for h, _ in items}) == dict(items[:6])
    assert log.hashes() == {h for h, _ in items[:6]}
    assert log.compact()
    assert log.load({h for h, _ in items}) == dict(items[:6])
    assert ExtractionCache(log.path, "v0").load({h for h, _ in items}) == dict(items[6:])
    assert len(log.path.read_bytes()) < len(old) and log.path.read_bytes().endswith(b"\n")
    assert not log.compact()  # nothing left to do
    assert not list(tmp_path.glob("*.tmp*"))
