"""Inputs that never end, and files that are not files (issue 33, finding 8): `kg build` refuses FIFOs and devices
and reports dangling links, one line each; reading is bounded in lines per file and in time per record, so no
input runs until killed; a CSV header too long to read is reported as such, not as kg's internal placeholder.

Reading that might not end runs in a child process with a deadline, so a regression fails the test instead of
hanging the suite.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest

import kg.readers as readers
import kg.readers.base as base
from kg.build import count_records
from kg.readers import PaperRecord, Skip, read_papers

from .helpers import ROOT, kg, no_traceback, write_jsonl

GOOD = {"id": "good-1", "abstract": "We propose GoodNet, a transformer model for image classification on ImageNet."}

_READ = """
import sys, orjson
from kg.readers import Skip, read_papers
out = [["skip", i.where, i.reason, i.detail] if isinstance(i, Skip) else ["paper", i.id]
       for i in read_papers(sys.argv[1:])]
sys.stdout.write(orjson.dumps(out).decode())
"""


def read_in_child(*paths: Path, timeout: float = 60) -> list[list[str]]:
    """What read_papers yields for ``paths``, read in a child process killed after ``timeout`` seconds."""
    try:
        r = subprocess.run([sys.executable, "-c", _READ, *map(str, paths)], capture_output=True, text=True,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading {[str(p) for p in paths]} did not end within {timeout:g} s")
    assert r.returncode == 0, r.stderr[-3000:]
    return orjson.loads(r.stdout)


def one_line_error(r: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    no_traceback(r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kg: error: "), r.stderr
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


# -- special files: refused, one line each -------------------------------------------------------------


def test_a_jsonl_link_to_dev_zero_named_is_refused_at_once(tmp_path: Path) -> None:
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    t0 = time.monotonic()
    r = kg("build", str(zero), "--store-dir", str(tmp_path / "s"), timeout=60)
    one_line_error(r, str(zero), "a character device, not a regular file")
    assert time.monotonic() - t0 < 60 and not (tmp_path / "s").exists()


def test_a_fifo_named_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "papers.jsonl"
    os.mkfifo(fifo)
    r = kg("build", str(fifo), "--store-dir", str(tmp_path / "s"), "--no-progress", timeout=60)
    one_line_error(r, str(fifo), "a FIFO, not a regular file")
    assert not (tmp_path / "s").exists()


def test_special_files_and_dangling_links_in_a_folder_are_one_skip_each(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "good.jsonl", [GOOD])
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "gone.jsonl").symlink_to(tmp_path / "moved-away.jsonl")
    (folder / "notes").symlink_to(tmp_path / "nowhere")  # not a format kg reads: not reported, as before
    items = read_in_child(folder)
    assert ["paper", "good-1"] in items
    skips = {Path(where).name: (reason, detail) for kind, where, reason, *detail in
             (i for i in items if i[0] == "skip")}
    assert skips == {
        "zero.jsonl": ("not a regular file", ["a character device"]),
        "pipe.jsonl": ("not a regular file", ["a FIFO"]),
        "gone.jsonl": ("dangling link", [f"to {tmp_path / 'moved-away.jsonl'}, which does not exist"]),
    }


def test_a_dangling_link_named_is_one_line(tmp_path: Path) -> None:
    link = tmp_path / "corpus.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    r = kg("build", str(link), "--store-dir", str(tmp_path / "s"), timeout=60)
    one_line_error(r, str(link), "a link to nowhere")


def test_the_cli_warns_once_per_odd_file_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    os.mkfifo(folder / "a.jsonl")
    (folder / "b.csv").symlink_to(tmp_path / "nowhere.csv")
    r = kg("build", str(folder), "--store-dir", str(tmp_path / "s"), timeout=60)
    assert r.returncode == 1
    no_traceback(r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines == [f"kg: warning: {folder / 'a.jsonl'}: skipped: not a regular file (a FIFO)",
                     f"kg: warning: {folder / 'b.csv'}: skipped: dangling link (to {tmp_path / 'nowhere.csv'}, "
                     f"which does not exist)",
                     f"kg: error: no paper could be read from {folder}"]


# -- bounded reading: lines per file, time per record ------------------------------------------------------


def _newlines_gz(path: Path, n: int, then: bytes = b"") -> Path:
    """A gzip of ``n`` newlines (then ``then``), written in pieces: a gigabyte of them is a megabyte."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as fh:
        piece = b"\n" * (1 << 20)
        for _ in range(n >> 20):
            fh.write(z.compress(piece))
        fh.write(z.compress(b"\n" * (n & ((1 << 20) - 1)) + then))
        fh.write(z.flush())
    return path


def test_a_file_stops_at_the_line_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_LINES", 100_000)
    f = _newlines_gz(tmp_path / "bomb.jsonl.gz", 300_000, then=orjson.dumps(GOOD) + b"\n")
    items = list(read_papers([f]))
    assert items == [Skip(f"{f}:100001", "unreadable file",
                          "over 100,000 lines, kg's limit for one file; stopped reading; split the file")]
    write_jsonl(tmp_path / "ok.jsonl", [GOOD] * 3)  # a file within the limit is read whole
    assert [type(i) for i in read_papers([tmp_path / "ok.jsonl"])] == [PaperRecord] * 3


def test_a_file_of_nothing_stops_after_the_time_per_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "RECORD_SECONDS", 0.3)
    f = _newlines_gz(tmp_path / "bomb.jsonl.gz", 20_000_000, then=orjson.dumps(GOOD) + b"\n")
    t0 = time.monotonic()
    items = list(read_papers([f]))
    seconds = time.monotonic() - t0
    assert len(items) == 1 and items[0].reason == "unreadable file", items
    assert "for 0.3 s of reading, kg's limit for one record; stopped reading" in items[0].detail
    assert seconds < 10, seconds


def test_time_between_records_is_not_counted_against_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build spends seconds extracting between batches: that is not reading time."""
    monkeypatch.setattr(base, "RECORD_SECONDS", 0.2)
    f = write_jsonl(tmp_path / "in.jsonl", [{**GOOD, "id": f"p{i}"} for i in range(4)])
    f.write_bytes(f.read_bytes().replace(b"\n", b"\n\n\n"))
    got = []
    for item in read_papers([f]):
        got.append(item)
        time.sleep(0.3)
    assert [type(i) for i in got] == [PaperRecord] * 4


def test_a_line_that_never_ends_stops_after_the_time_per_record(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "RECORD_SECONDS", 0.5)
    monkeypatch.setattr(readers, "RECORD_SECONDS", 0.5)
    f = tmp_path / "endless.jsonl"
    with open(f, "wb") as fh:
        fh.write(orjson.dumps(GOOD) + b"\n")
    try:
        os.truncate(f, 1 << 40)  # a terabyte of zero bytes and no newline: sparse, so it takes no disk space
    except OSError:
        pytest.skip("no sparse files here")
    t0 = time.monotonic()
    items = list(read_papers([f]))
    assert [type(i) for i in items] == [PaperRecord, Skip] and items[1].reason == "unreadable file", items
    assert "stopped reading" in items[1].detail
    t1 = time.monotonic()
    assert count_records([f]) is None  # the progress estimate gives up too
    assert t1 - t0 < 20 and time.monotonic() - t1 < 20


@pytest.mark.slow
def test_a_gigabyte_of_newlines_ends_in_seconds_not_20_minutes(tmp_path: Path) -> None:
    """The probe's file: a 1 MB .jsonl.gz of 1 GiB of newlines, read by the real command line."""
    f = _newlines_gz(tmp_path / "bomb.jsonl.gz", 1 << 30)
    assert f.stat().st_size < 2 << 20
    t0 = time.monotonic()
    r = kg("build", str(f), "--store-dir", str(tmp_path / "s"), timeout=150)
    seconds = time.monotonic() - t0
    assert r.returncode == 1
    no_traceback(r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"kg: warning: {f}:") and "stopped reading" in lines[0], lines
    assert lines[1] == f"kg: error: no paper could be read from {f}"
    print(f"\n[reliability] 1 GiB of newlines in {f.stat().st_size:,} bytes of gzip: refused in {seconds:.1f} s")


# -- the CSV bomb -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_a_csv_header_over_the_line_limit_is_reported_as_such(tmp_path: Path, encoding: str) -> None:
    f = tmp_path / "bomb.csv"
    header = "abstract," + ",".join(f"c{i}" for i in range(400_000))  # 3 MB of column names
    f.write_bytes((header + "\n" + "An abstract about BERT.,x\n").encode(encoding))
    items = read_in_child(f)
    assert items == [["skip", f"{f}:1", "line too long",
                      "the header row is over 2,097,152 bytes; stopped reading"]], items
    assert "\ue000" not in orjson.dumps(items).decode()


def test_no_warning_shows_the_long_line_placeholder(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text("title,abstract\nT,A fine abstract about BERT.\nU," + "x" * (3 << 20) + "\n", encoding="utf-8")
    skips = [i for i in read_papers([f]) if isinstance(i, Skip)]
    assert [s.reason for s in skips] == ["line too long"]
    assert all("\ue000" not in s.message() for s in skips)
    f.write_text("Ref," + "y" * 200 + "\n1,2\n", encoding="utf-8")  # no abstract column: names cut short
    (skip,) = list(read_papers([f]))
    assert skip.reason == "no abstract column" and len(skip.message()) < 300, skip.message()


def test_gzip_inputs_still_read(tmp_path: Path) -> None:
    f = tmp_path / "ok.jsonl.gz"
    f.write_bytes(gzip.compress(orjson.dumps(GOOD) + b"\n"))
    items: list[Any] = list(read_papers([f]))
    assert [i.id for i in items] == ["good-1"]
