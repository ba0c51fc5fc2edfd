"""Reading seed lists and JSON Lines: ids, headers, and located skips for bad input."""

import gzip
import json
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.readers import PaperRecord, Skip, content_id, parse_seed_header, read_papers


def split(items):
    recs = [i for i in items if isinstance(i, PaperRecord)]
    skips = [i for i in items if isinstance(i, Skip)]
    return recs, skips


def test_seed_header_names_venue_and_year() -> None:
    assert parse_seed_header("NeurIPS 2025 论文列表") == ("NeurIPS", 2025)
    assert parse_seed_header("ICML 2024 accepted papers") == ("ICML", 2024)
    assert parse_seed_header("论文列表") == (None, None)


def test_seed_list_paragraphs_get_stable_content_ids(tmp_path: Path) -> None:
    f = tmp_path / "list.txt"
    f.write_text("NeurIPS 2025 论文列表\n\nFirst abstract\ncontinues here.\n\n\nSecond abstract.\n", encoding="utf-8")
    recs, skips = split(list(read_papers([f])))
    assert not skips
    assert [r.abstract for r in recs] == ["First abstract continues here.", "Second abstract."]
    assert all(r.venue == "NeurIPS" and r.year == 2025 for r in recs)
    assert recs[0].id == content_id("First abstract  continues here.") == content_id("first abstract continues here.")
    assert recs[0].source.endswith("list.txt:3")
    again, _ = split(list(read_papers([f])))
    assert [r.id for r in again] == [r.id for r in recs]


def test_the_shipped_seeds_read_cleanly(seeds_dir: Path) -> None:
    recs, skips = split(list(read_papers([seeds_dir])))
    assert len(recs) == 57 and not skips
    assert len({r.id for r in recs}) == 57


def test_jsonl_plain_and_gzip(tmp_path: Path) -> None:
    rows = [{"id": "a1", "title": "T", "abstract": "Some text.", "year": 2024, "venue": "arXiv", "authors": ["X Y"]}]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with gzip.open(tmp_path / "c2.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(rows[0] | {"id": "a2"}) + "\n")
    recs, skips = split(list(read_papers([tmp_path / "c.jsonl", tmp_path / "c2.jsonl.gz"])))
    assert [r.id for r in recs] == ["a1", "a2"] and not skips
    assert recs[0].authors == ["X Y"] and recs[0].year == 2024


def test_bad_lines_are_skipped_with_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"id": "ok1", "abstract": "fine"}\n'
                  b'{"id": "x", "abstract": \n'
                  b'{"id": "noabs", "title": "t"}\n'
                  b'{"id": "y", "abstract": "caf\xe9 latin-1"}\n'
                  b'{"id": "z", "abstract": "ok", "year": "soon"}\n'
                  b'[1, 2]\n'
                  b'{"id": "ok2", "abstract": "also fine", "authors": "A B, C D"}\n')
    recs, skips = split(list(read_papers([f])))
    assert [r.id for r in recs] == ["ok1", "ok2"]
    assert recs[1].authors == ["A B", "C D"]
    by_line = {s.where.rsplit(":", 1)[1]: s.reason for s in skips}
    assert by_line == {"2": "malformed JSON", "3": "no abstract", "4": "not valid UTF-8",
                       "5": "field 'year' is not an integer", "6": "not a JSON object"}
    assert all(s.where.startswith(str(f)) for s in skips)


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    data = gzip.compress(b"".join(json.dumps({"id": f"p{i}", "abstract": "x " * 50}).encode() + b"\n"
                                  for i in range(200)))
    f = tmp_path / "cut.jsonl.gz"
    f.write_bytes(data[: len(data) // 2])
    recs, skips = split(list(read_papers([f])))
    assert 0 < len(recs) < 200
    assert len(skips) == 1 and skips[0].reason == "unreadable file"


def test_missing_path_and_empty_directory_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        list(read_papers([tmp_path / "nope.jsonl"]))
    with pytest.raises(InputError, match="no .txt"):
        list(read_papers([tmp_path]))


def test_empty_and_header_only_files_yield_no_records_and_one_counted_skip(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "header.txt").write_text("NeurIPS 2025 论文列表\n")
    items = list(read_papers([tmp_path / "empty.txt", tmp_path / "header.txt"]))
    assert [(type(i), i.reason, i.detail) for i in items] == [
        (Skip, "no records in file", "empty"), (Skip, "no records in file", "only a header")]
