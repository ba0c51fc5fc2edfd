"""Bad input never stops a build: each bad file or line is one located, counted skip, the good records are
ingested, and the store stays valid. Every input file is generated here."""

from __future__ import annotations

import gzip
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from kg.build import build
from kg.extract.types import Extraction
from kg.readers import MAX_ID_CHARS, PaperRecord, Skip, content_id, read_papers
from kg.store.embedded import EmbeddedStore
from viz import assets, paper_view

from .helpers import check_store_valid, graph_dump, kg, no_traceback, write_jsonl

GOOD = "We propose {name}, a transformer model for image classification, and evaluate it on ImageNet."
HOSTILE_TITLE = "<script>alert('t')</script><img src=x onerror=alert(1)> Title"


def good(i: int, **extra: Any) -> dict[str, Any]:
    return {"id": f"good-{i}", "abstract": GOOD.format(name=f"Net{i}"), "year": 2024, **extra}


def make_corpus(root: Path) -> tuple[dict[str, int], set[str]]:
    """Write the hostile corpus under ``root``; return the expected skips by reason and the ids to be kept."""
    root.mkdir()
    skips: Counter[str] = Counter()
    kept: set[str] = set()
    n = iter(range(1000))

    def keep(**extra: Any) -> dict[str, Any]:
        row = good(next(n), **extra)
        kept.add(str(row["id"]))
        return row

    # Empty files, and a seed list that is only its header.
    (root / "empty.jsonl").write_bytes(b"")
    (root / "empty.txt").write_bytes(b"")
    (root / "header_only.txt").write_text("NeurIPS 2025 论文列表\n\n\n", encoding="utf-8")
    skips["no records in file"] += 3

    # A 20 MB abstract on one line (JSON Lines and seed list), and one just over the abstract limit.
    huge = "word " * 4_000_000
    with open(root / "huge.jsonl", "wb") as fh:
        fh.write(orjson.dumps({"id": "huge", "abstract": huge}) + b"\n")
        fh.write(orjson.dumps({"id": "long", "abstract": "x" * 150_000}) + b"\n")
        fh.write(orjson.dumps(keep()) + b"\n")
    skips["line too long"] += 1
    skips["abstract too long"] += 1
    seed_good = "We introduce SeedNet, a model for question answering evaluated on SQuAD."
    (root / "huge.txt").write_text(f"ICML 2024\n\n{huge}\n\n{seed_good}\n", encoding="utf-8")
    kept.add(content_id(seed_good))
    skips["line too long"] += 1

    # Truncated gzip (the first records survive), and a ".gz" that is not gzip at all.
    gz = gzip.compress(b"".join(orjson.dumps(good(900 + i)) + b"\n" for i in range(40)))
    (root / "cut.jsonl.gz").write_bytes(gz[: len(gz) // 2])
    survivors = {r.id for r in read_papers([root / "cut.jsonl.gz"]) if isinstance(r, PaperRecord)}
    assert 0 < len(survivors) < 40
    kept |= survivors
    (root / "not-gzip.jsonl.gz").write_bytes(b'{"id": "plain", "abstract": "not compressed"}\n')
    skips["unreadable file"] += 2

    # Mixed encodings and invalid UTF-8; a byte-order mark on the first line is fine.
    enc = [
        b"\xef\xbb\xbf" + orjson.dumps(keep(title="BOM first")),
        orjson.dumps(good(500)).replace(b"Net500", b"Caf\xe9Net"),  # Latin-1
        orjson.dumps(good(501)).replace(b"Net501", b"\xc0\xafNet"),  # overlong encoding
        orjson.dumps(good(502)).replace(b"Net502", b"\xed\xa0\x80Net"),  # an encoded surrogate
        orjson.dumps(good(503)).replace(b"Net503", b"\x80\x80Net"),  # stray continuation bytes
        '{"id": "u16", "abstract": "utf-16"}'.encode("utf-16"),
        orjson.dumps(keep(title="Ünïcödé ✓ 数据集 😀")),
        b'{"id": "lone", "abstract": "a lone surrogate \\ud800 escaped"}',
    ]
    (root / "encodings.jsonl").write_bytes(b"\n".join(enc) + b"\n")
    skips["not valid UTF-8"] += 5
    skips["malformed JSON"] += 1
    (root / "latin1.txt").write_bytes("ICML 2024\n\nAn abstract about caf\xe9s and BERT.\n\n".encode("latin-1")
                                      + b"We use BERT for question answering on SQuAD.\n")
    kept.add(content_id("We use BERT for question answering on SQuAD."))
    skips["not valid UTF-8"] += 1

    # JSON lines with wrong types or missing fields.
    blank_id = good(next(n), id="   ")  # a blank id becomes a content id
    kept.add(content_id(blank_id["abstract"]))
    typed: list[tuple[object, str | None]] = [
        ({"id": "t1", "abstract": 42}, "field 'abstract' is not a string"),
        ({"id": "t2", "abstract": ["a", "b"]}, "field 'abstract' is not a string"),
        ({"id": "t3", "title": "no abstract"}, "no abstract"),
        ({"id": "t4", "abstract": "   "}, "no abstract"),
        ({"id": "t5", "abstract": None}, "no abstract"),
        ({"id": 3.5, "abstract": "float id"}, "field 'id' is not a string"),
        ({"id": True, "abstract": "bool id"}, "field 'id' is not a string"),
        ({"id": {"x": 1}, "abstract": "object id"}, "field 'id' is not a string"),
        ({"id": "i" * (MAX_ID_CHARS + 1), "abstract": "long id"}, "field 'id' is too long"),
        ({"id": "new\nline", "abstract": "control characters in the id"}, "field 'id' has control characters"),
        ({"id": "t6", "abstract": "x", "title": ["list"]}, "field 'title' is not a string"),
        ({"id": "t7", "abstract": "x", "title": "t" * 5000}, "field 'title' is too long"),
        ({"id": "t8", "abstract": "x", "year": "soon"}, "field 'year' is not an integer"),
        ({"id": "t9", "abstract": "x", "year": 2024.5}, "field 'year' is not an integer"),
        ({"id": "t10", "abstract": "x", "year": "²"}, "field 'year' is not an integer"),
        ({"id": "t11", "abstract": "x", "year": 99999}, "field 'year' is out of range"),
        ({"id": "t12", "abstract": "x", "year": True}, "field 'year' is not an integer"),
        ({"id": "t13", "abstract": "x", "venue": 7}, "field 'venue' is not a string"),
        ({"id": "t14", "abstract": "x", "authors": {"a": 1}}, "field 'authors' is not a list of strings"),
        ({"id": "t15", "abstract": "x", "authors": ["ok", 3]}, "field 'authors' is not a list of strings"),
        ({"id": "t16", "abstract": "x", "authors": ["a" * 400]}, "field 'authors' is too long"),
        (None, "not a JSON object"), ([1, 2], "not a JSON object"), ("text", "not a JSON object"),
        (12, "not a JSON object"),
        (blank_id, None),
        (keep(id=12345, year="2023", authors="A. One, B. Two and C. Three"), None),  # an int id, a string year
        (keep(abstract_extra=1, unknown_field={"nested": [1, 2]}), None),  # unknown fields are ignored
    ]
    rows = [orjson.dumps(obj) for obj, _ in typed] + [b'{"id": "x", "abstract": ', b"{broken", b"]", b"   "]
    (root / "types.jsonl").write_bytes(b"\n".join(rows) + b"\n")
    for _, reason in typed:
        if reason:
            skips[reason] += 1
    skips["malformed JSON"] += 3

    # Duplicate ids with different text (skipped, first kept), and the same record twice (counted once).
    dup = keep(id="dup")
    write_jsonl(root / "dupes.jsonl", [dup, {"id": "dup", "abstract": "A different text under the same id."}, dup])
    skips["duplicate id with different text"] += 1
    skips["duplicate record"] += 1

    # NUL bytes, right-to-left and zero-width characters, LaTeX that never closes, HTML and <script>.
    write_jsonl(root / "odd_text.jsonl", [
        keep(id="nul", abstract="We propose Nul\x00Net, a model for parsing.\x00", title="NUL\x00title"),
        keep(id="rtl", abstract="We propose \u202eteNLTR\u202c and Z\u200bero\u200dNet for \u2067translation\u2069.",
             title="\u200f\u202bRTL title\u202c"),
        keep(id="latex", abstract="We use $\\mathcal{O}(n \\log n and \\textit{unclosed {{{ braces for BERT "
                                  + "\\begin{equation} x^2 " * 2000),
        keep(id="braces", abstract="{" * 20_000 + " We use BERT."),
        keep(id="html", title=HOSTILE_TITLE,
             abstract="We propose <b>HtmlNet</b> <script>alert(1)</script> for parsing </script><!-- on -->."),
    ])
    (root / "nul.txt").write_bytes(b"ICML 2024\n\nWe propose NulSeed\x00Net for parsing text.\n")
    kept.add(content_id("We propose NulSeed\x00Net for parsing text."))
    return dict(skips), kept


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], set[str]]:
    root = tmp_path_factory.mktemp("bad") / "in"
    skips, kept = make_corpus(root)
    return root, skips, kept


@pytest.fixture(scope="module")
def library_build(corpus: tuple[Path, dict[str, int], set[str]], extractor: Any,
                  tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[Skip]]:
    root, _, _ = corpus
    store_dir = tmp_path_factory.mktemp("bad-store") / "s"
    reported: list[Skip] = []
    with EmbeddedStore(store_dir, writable=True) as store:
        summary = build([root], store, extractor=lambda: extractor, on_skip=reported.append)
    return store_dir, summary, reported


def test_every_bad_input_is_a_located_counted_skip(corpus: tuple[Path, dict[str, int], set[str]],
                                                   library_build: tuple[Path, Any, list[Skip]]) -> None:
    root, expected_skips, kept = corpus
    store_dir, summary, reported = library_build
    assert dict(summary.skipped) == expected_skips
    # Each reported skip names its file and line; "duplicate record" is counted but not worth a warning.
    assert len(reported) == sum(expected_skips.values()) - expected_skips["duplicate record"]
    for s in reported:
        path, line = s.where.rsplit(":", 1)
        assert Path(path).parent == root and int(line) >= 1, s
        assert s.message().startswith(f"{s.where}: skipped: {s.reason}")
    with EmbeddedStore(store_dir) as store:
        ids = {p.id for p in store.list_papers(limit=200).items}
        assert ids == kept and summary.read == len(kept) + expected_skips["duplicate id with different text"] + 1
        # Text is kept as written: markup, NUL, bidi and zero-width characters are data, not instructions.
        html = store.get_paper("html")
        assert html.title == HOSTILE_TITLE and "<script>alert(1)</script>" in html.abstract
        assert "\x00" in store.get_paper("nul").abstract
        assert "\u202e" in store.get_paper("rtl").abstract
        # Offsets still point into the abstract as written, whatever it holds.
        for pid in ("nul", "rtl", "latex", "html"):
            detail = store.get_paper(pid)
            for links in detail.entities.values():
                for link in links:
                    ev = link.evidence
                    if ev is not None and ev.start is not None:
                        assert 0 <= ev.start < ev.end <= len(detail.abstract)
    stats = check_store_valid(store_dir)
    assert stats["papers"] == len(kept)


def test_markup_from_the_data_never_becomes_markup_in_a_view(library_build: tuple[Path, Any, list[Skip]]) -> None:
    with EmbeddedStore(library_build[0]) as store:
        for pid in ("html", "nul", "rtl"):
            html = paper_view(store, pid).html
            assert "<script>alert" not in html and "<img src=x" not in html and "<b>HtmlNet" not in html
            assert html.count("<script") == 4 + sum(js().count("<script") for js in (assets.vis_js, assets.charts_js,
                                                                                    assets.app_js))
            assert "\x00" not in html  # a NUL is escaped in the page's JSON


def test_the_real_cli_reports_skips_without_a_traceback(corpus: tuple[Path, dict[str, int], set[str]],
                                                        library_build: tuple[Path, Any, list[Skip]],
                                                        tmp_path: Path) -> None:
    root, expected_skips, kept = corpus
    store_dir = tmp_path / "s"
    r = kg("build", str(root), "--store-dir", str(store_dir), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    no_traceback(r.stderr)
    warnings = [line for line in r.stderr.splitlines() if ": skipped: " in line]
    assert len(warnings) == sum(expected_skips.values()) - expected_skips["duplicate record"]
    assert all(line.startswith(f"kg: warning: {root}/") for line in warnings)
    assert f"read {len(kept) + 2} papers" in r.stdout and f"skipped {sum(expected_skips.values())}" in r.stdout
    # The same input gives the same bytes, whether built by the library or the command line.
    assert graph_dump(store_dir) == graph_dump(library_build[0])
    assert check_store_valid(store_dir)["papers"] == len(kept)

    # Nothing readable at all: exit 1 with one line saying so, and the store keeps what it had.
    only_bad = [root / "empty.jsonl", root / "not-gzip.jsonl.gz", root / "header_only.txt"]
    r = kg("build", *map(str, only_bad), "--store-dir", str(store_dir), timeout=300)
    assert r.returncode == 1
    no_traceback(r.stderr)
    errors = [line for line in r.stderr.splitlines() if not line.startswith("kg: warning:")]
    assert len(errors) == 1 and "no paper could be read" in errors[0]
    assert check_store_valid(store_dir)["papers"] == len(kept)


def test_100k_tiny_abstracts_read_fast(tmp_path: Path) -> None:
    """Reading (no extraction) 100,000 three-word abstracts; spaCy alone would take minutes for them."""
    f = tmp_path / "tiny.jsonl"
    with open(f, "wb") as fh:
        for i in range(100_000):
            fh.write(b'{"id": "t%d", "abstract": "tiny abstract %d"}\n' % (i, i))
    t0 = time.perf_counter()
    n = skipped = 0
    for item in read_papers([f]):
        if isinstance(item, PaperRecord):
            n += 1
        else:
            skipped += 1
    seconds = time.perf_counter() - t0
    assert (n, skipped) == (100_000, 0)
    assert seconds < 30, f"reading 100k lines took {seconds:.1f} s"


class _NoExtraction:
    """An extractor that finds nothing, so a build's reading, logging, deriving and saving are measured alone."""

    def extract_many(self, texts: Any, titles: Any = None) -> Any:
        return (Extraction() for _ in texts)


@pytest.mark.slow
def test_100k_tiny_abstracts_build_without_spacy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "tiny.jsonl"
    with open(f, "wb") as fh:
        for i in range(100_000):
            fh.write(b'{"id": "t%d", "abstract": "tiny abstract %d", "venue": "V%d"}\n' % (i, i, i % 7))
    t0 = time.perf_counter()
    with EmbeddedStore(tmp_path / "s", writable=True) as store:
        s = build([f], store, extractor=_NoExtraction)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    assert s.read == 100_000 and s.stats is not None and s.stats.papers == 100_000
    assert check_store_valid(tmp_path / "s")["papers"] == 100_000
    with capsys.disabled():
        print(f"\n[reliability] 100k tiny abstracts, build without extraction: {seconds:.1f} s")


@pytest.mark.slow
def test_tiny_abstracts_build_with_spacy(tmp_path: Path, extractor: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A full build (spaCy included) of 3,000 three-word abstracts: 100,000 would take minutes (about 1.5 ms each)."""
    n = 3_000
    f = tmp_path / "tiny.jsonl"
    f.write_bytes(b"".join(b'{"id": "t%d", "abstract": "Tiny abstract %d."}\n' % (i, i) for i in range(n)))
    t0 = time.perf_counter()
    with EmbeddedStore(tmp_path / "s", writable=True) as store:
        s = build([f], store, extractor=lambda: extractor)
    seconds = time.perf_counter() - t0
    with capsys.disabled():
        print(f"\n[reliability] {n} tiny abstracts, full build with spaCy: {seconds:.1f} s "
              f"({1000 * seconds / n:.2f} ms each; 100k would take about {100_000 * seconds / n:.0f} s)")
    assert s.read == n and check_store_valid(tmp_path / "s")["papers"] == n
