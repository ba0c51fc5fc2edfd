"""A damaged store, or odd files in it (issue 33, findings 4 and 7): every read gives the right answer or one clear
error naming the file and how to put it right (HTTP 503 from the API), never a 500, a wrong answer or a hang; and
`kg build` derives a damaged store again from its extraction log instead of refusing it.

The byte-flip test flips bytes of a small store's files, one at a time (a seeded sample; ``KG_FLIP_SAMPLE=0``
flips every byte, ``KG_FLIP_PARTS=N`` splits the work into N tests for ``pytest -n``), and reads everything a
user can read after each flip.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.main import create_app
from kg.build import build
from kg.errors import StoreError
from kg.fulltext import FULLTEXT_DIR
from kg.graph import with_dates
from kg.readers import PaperRecord
from kg.store import filelock
from kg.store.embedded import INPUTS_FILE, LOCK_FILE, EmbeddedStore, write_graph
from kg.store.snapshot import SNAPSHOT_FILE, Snapshot

from .helpers import graph_dump, kg, no_traceback, write_jsonl

HINT = "kg build --store-dir"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(LOCK_FILE))
    return dst


def _flip(path: Path, at: int, mask: int = 0x5A) -> None:
    with open(path, "r+b") as fh:
        fh.seek(at)
        b = fh.read(1)[0]
        fh.seek(at)
        fh.write(bytes([b ^ mask]))


def _one_line_error(r: subprocess.CompletedProcess[str], *names: str) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    no_traceback(r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kg: error: "), r.stderr
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


# -- finding 4: a damaged full-text segment ------------------------------------------------------------


def _index_file(store_dir: Path, suffix: str) -> Path:
    found = sorted((store_dir / FULLTEXT_DIR).glob(f"*{suffix}"))
    assert found, list((store_dir / FULLTEXT_DIR).iterdir())
    return max(found, key=lambda f: f.stat().st_size)


@pytest.mark.parametrize("suffix", [".store", ".idx", ".pos", ".term", ".fast", ".fieldnorm", "meta.json"])
def test_a_damaged_full_text_file_is_a_503_naming_it_never_a_500(tmp_path: Path, built: dict[str, Path],
                                                                  suffix: str) -> None:
    """Three bytes flipped in ``fulltext/*.store`` gave ``ValueError: An IO error occurred`` and a 500 on every
    search; now any file of the index is checked against its checksum."""
    store_dir = _copy(built["a"], tmp_path / "s")
    f = _index_file(store_dir, suffix)
    size = f.stat().st_size
    for at in (size // 3, size // 2, 2 * size // 3):
        _flip(f, at)
    store = EmbeddedStore(store_dir)
    client = TestClient(create_app(store=store), raise_server_exceptions=False)
    for url in ("/papers?q=language%20model", "/search?q=language%20model", "/papers?q=learning&year=2025"):
        r = client.get(url)
        assert r.status_code == 503, (url, r.status_code, r.text[:500])
        detail = r.json()["detail"]
        assert str(f) in detail and "damaged full-text index" in detail and HINT in detail, detail
    assert client.get("/health").status_code == 200  # the rest of the store still answers
    assert client.get("/stats").status_code == 200
    with pytest.raises(StoreError, match="damaged full-text index"):
        store.list_papers(q="language model")


def test_the_cli_names_a_damaged_full_text_file_in_one_line(tmp_path: Path, built: dict[str, Path]) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    f = _index_file(store_dir, ".store")
    for at in (10, 20, 30):
        _flip(f, at)
    r = kg("papers", "language model", "--store-dir", str(store_dir), timeout=120)
    _one_line_error(r, str(f), "damaged full-text index", HINT)


def test_a_search_that_tantivy_fails_on_is_a_store_error(tmp_path: Path, built: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Damage the checksums cannot see (a file changed after the index was opened) is still no 500."""
    store = EmbeddedStore(_copy(built["a"], tmp_path / "s"))
    index = store._fulltext()

    class Broken:
        def search(self, *a: Any, **k: Any) -> Any:
            raise ValueError("An IO error occurred")

    monkeypatch.setattr(index, "searcher", Broken())
    r = TestClient(create_app(store=store), raise_server_exceptions=False).get("/papers?q=model")
    assert r.status_code == 503 and "An IO error occurred" in r.json()["detail"]


# -- finding 7: odd store files, and builds into a damaged store ---------------------------------------


def _fifo(path: Path) -> None:
    if path.exists():
        path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("odd", ["directory", "fifo", "dangling link", "link to a file"])
def test_an_odd_lock_file_is_one_line_from_kg_build(tmp_path: Path, built: dict[str, Path],
                                                    corpora: dict[str, Path], odd: str) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    lock = store_dir / LOCK_FILE
    if odd == "directory":
        lock.mkdir()
    elif odd == "fifo":
        _fifo(lock)
    elif odd == "dangling link":
        lock.symlink_to(tmp_path / "nowhere")
    else:
        (tmp_path / "elsewhere").write_text("")
        lock.symlink_to(tmp_path / "elsewhere")
    before = (store_dir / SNAPSHOT_FILE).read_bytes()
    r = kg("build", str(corpora["a"]), "--store-dir", str(store_dir), "--no-progress", timeout=120)
    line = _one_line_error(r, str(lock), "not the store's lock file", "remove it")
    assert {"directory": "a directory", "fifo": "a FIFO", "dangling link": "a symbolic link",
            "link to a file": "a symbolic link"}[odd] in line
    assert (store_dir / SNAPSHOT_FILE).read_bytes() == before
    assert not (tmp_path / "nowhere").exists()  # a link is never followed, nor its target made


@pytest.mark.parametrize("command", ["stats", "cypher", "build", "serve", "upgrade", "papers"])
def test_a_fifo_for_a_snapshot_is_one_line_never_a_hang(tmp_path: Path, built: dict[str, Path],
                                                        corpora: dict[str, Path], command: str) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    _fifo(store_dir / SNAPSHOT_FILE)
    args = {"stats": ["stats"], "cypher": ["cypher", "MATCH (n) RETURN count(n)"],
            "build": ["build", str(corpora["a"]), "--no-progress"], "serve": ["serve", "--port", "0"],
            "upgrade": ["upgrade"], "papers": ["papers"]}[command]
    r = kg(*args, "--store-dir", str(store_dir), timeout=60)  # a hang is a TimeoutExpired: the test fails
    _one_line_error(r, str(store_dir / SNAPSHOT_FILE), "a FIFO", "remove it", HINT)


@pytest.mark.parametrize(("name", "odd"), [(INPUTS_FILE, "fifo"), (INPUTS_FILE, "directory"),
                                           (SNAPSHOT_FILE, "directory"), (SNAPSHOT_FILE, "dangling link"),
                                           ("overrides.txt", "fifo"), (".saving", "directory"),
                                           (FULLTEXT_DIR, "fifo"), (".", "file")])
def test_odd_files_in_a_store_are_one_line_for_readers_and_builds(tmp_path: Path, built: dict[str, Path],
                                                                  corpora: dict[str, Path], name: str,
                                                                  odd: str) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    target = store_dir / name
    if name == ".":
        shutil.rmtree(store_dir)
        store_dir.write_text("not a folder")
    elif odd == "fifo":
        if target.is_dir():
            shutil.rmtree(target)
        _fifo(target)
    elif odd == "directory":
        target.unlink(missing_ok=True)
        target.mkdir()
        (target / "x").write_text("x")
    else:
        target.unlink()
        target.symlink_to(tmp_path / "nowhere")
    named = str(target) if name != "." else str(store_dir)
    for writable in (False, True):
        with pytest.raises(StoreError) as err:
            EmbeddedStore(store_dir, writable=writable)
        assert named in str(err.value) and "\n" not in str(err.value)
    r = kg("build", str(corpora["a"]), "--store-dir", str(store_dir), "--no-progress", timeout=60)
    if name == ".":  # the option itself refuses it, as a usage error
        assert r.returncode == 2 and "is a file" in r.stderr, r.stderr
        no_traceback(r.stderr)
    else:
        _one_line_error(r, named)


def _damage(store_dir: Path, how: str) -> None:
    f = store_dir / SNAPSHOT_FILE
    if how == "header":  # what gave `kg stats` a wrong count (`ªSES 220`) before the header had its own CRC
        data = f.read_bytes()
        hlen = int.from_bytes(data[-16:-8], "little")
        _flip(f, len(data) - 20 - hlen // 2)
    elif how == "papers":
        start, length = Snapshot(f).header["sections"]["papers"]
        _flip(f, start + length // 2)
    elif how == "garbage":
        f.write_bytes(b"x" * 4096)
    elif how == "truncated":
        f.write_bytes(f.read_bytes()[:5000])
    elif how == "empty":
        f.write_bytes(b"")
    elif how == "nodes":
        start, length = Snapshot(f).header["sections"]["nodes"]
        _flip(f, start + length // 2)


@pytest.mark.parametrize("how", ["header", "papers", "garbage", "truncated", "empty", "nodes"])
def test_kg_build_derives_a_damaged_store_again_from_its_extraction_log(
        tmp_path: Path, built: dict[str, Path], corpora: dict[str, Path], graph_bytes: dict[str, bytes],
        how: str) -> None:
    """Reads say 'damaged snapshot; rebuild the store', and `kg build` did refuse that store; now a build with
    its input, or with none, puts it right: the same graph as before the damage."""
    store_dir = _copy(built["a"], tmp_path / "s")
    _damage(store_dir, how)
    line = _one_line_error(kg("stats", "--store-dir", str(store_dir), timeout=120), str(store_dir / SNAPSHOT_FILE),
                           HINT)
    assert "damaged" in line or "not a kg snapshot" in line
    r = kg("build", str(corpora["a"]), "--store-dir", str(store_dir), "--no-progress", timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    no_traceback(r.stderr)
    assert "read 20 papers (0 extracted, 20 unchanged)" in r.stdout
    if how in ("nodes",):  # the list of papers is whole: the build reads it, as always
        assert r.stderr == ""
    else:
        warning = r.stderr.strip().splitlines()
        assert len(warning) == 1 and "deriving the store again from its extraction log (20 papers)" in warning[0]
    assert graph_dump(store_dir) == graph_bytes["a"]


@pytest.mark.parametrize("how", ["header", "garbage"])
def test_kg_build_without_paths_rebuilds_a_store_from_its_log(tmp_path: Path, built: dict[str, Path],
                                                              graph_bytes: dict[str, bytes], how: str) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    f = _index_file(store_dir, ".store")
    _flip(f, 7)
    _damage(store_dir, how)
    r = kg("build", "--store-dir", str(store_dir), "--no-progress", timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    no_traceback(r.stderr)
    assert "read 0 papers" in r.stdout and "store " in r.stdout
    assert graph_dump(store_dir) == graph_bytes["a"]
    with EmbeddedStore(store_dir) as store:  # the full-text index is written anew too
        assert store.list_papers(q="model").total > 0


def test_kg_build_without_paths_needs_a_store_with_a_log(tmp_path: Path) -> None:
    r = kg("build", "--store-dir", str(tmp_path / "none"), timeout=60)
    _one_line_error(r, "name the files or folders of papers to read")
    assert not (tmp_path / "none").exists()


def test_kg_upgrade_of_a_damaged_store_says_how_to_rebuild(tmp_path: Path, built: dict[str, Path]) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    _damage(store_dir, "header")
    _one_line_error(kg("upgrade", "--store-dir", str(store_dir), timeout=120), "damaged snapshot header", HINT)


def test_a_damaged_store_with_an_empty_log_is_refused(tmp_path: Path, built: dict[str, Path],
                                                      corpora: dict[str, Path]) -> None:
    store_dir = _copy(built["a"], tmp_path / "s")
    _damage(store_dir, "garbage")
    (store_dir / INPUTS_FILE).write_bytes(b"")
    with pytest.raises(StoreError, match="holds no paper to derive the store from"):
        EmbeddedStore(store_dir, writable=True)
    filelock.release(filelock.acquire(store_dir, LOCK_FILE, wait=False))  # the refused open let go of the lock


def test_a_snapshot_of_a_newer_kg_is_refused_never_overwritten(tmp_path: Path, built: dict[str, Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.store.embedded as emb

    store_dir = _copy(built["a"], tmp_path / "s")
    monkeypatch.setattr(emb, "READABLE", (3, 4))  # as if this kg read only formats before the store's
    with pytest.raises(StoreError, match="made by a newer kg"):
        EmbeddedStore(store_dir, writable=True)


# -- every byte: the right answer or a clear error -----------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, seed_records: list[PaperRecord], extractor: Any) -> Path:
    """A store of 3 papers: small enough to flip a good share of its bytes."""
    src = write_jsonl(tmp_path_factory.mktemp("tiny-in") / "in.jsonl",
                      [{"id": r.id, "abstract": r.abstract, "title": f"Paper {i}", "venue": r.venue, "year": r.year}
                       for i, r in enumerate(seed_records[:3])])
    path = tmp_path_factory.mktemp("tiny") / "s"
    with EmbeddedStore(path, writable=True) as s:
        build([src], s, extractor=lambda: extractor, on_skip=lambda s: None)
    (path / LOCK_FILE).unlink()
    return path


def _answers(store_dir: Path) -> dict[str, Any]:
    """Everything a user reads: the whole graph (every node and every edge blob decoded), stats, Cypher, each
    paper with its related papers, a word search (the full-text index) and a search by meaning."""
    with EmbeddedStore(store_dir) as s:
        buf = io.BytesIO()
        write_graph(with_dates(s.graph, as_text=True), s._papers, buf)
        g = s.graph
        pred = [(v, u, k, sorted(d)) for v in sorted(g.nodes) for u, kd in g.pred[v].items() for k, d in kd.items()]
        papers = sorted(s.by_label("Paper"))
        words = [w for w in (s.graph.nodes[papers[0]].get("abstract") or "model").split() if w.isalpha()][:2]
        return {
            "graph": buf.getvalue(),
            "in-edges": pred,  # every node's in-edge blob decoded too (the dump reads out-edges)
            "stats": s.stats(),
            "cypher": s.cypher("MATCH (p:Paper)-[r]->(e) RETURN p.id, type(r), e.name, r.sentence "
                               "ORDER BY p.id, type(r), e.name, r.sentence", max_rows=10**6).rows,
            "papers": [s.get_paper(p) for p in papers],
            "related": [s.related_papers(p) for p in papers],
            "fulltext": [s.list_papers(q=" ".join(words)), s.list_papers(q="model")],
            "search": s.search(" ".join(words)),
        }


def _positions(store_dir: Path, rng: random.Random) -> list[tuple[str, int]]:
    """(file, offset) to flip: every byte when KG_FLIP_SAMPLE=0, else a seeded sample spread over the files
    in proportion to their sizes (at least 16 per file)."""
    files = {str(f.relative_to(store_dir)): f.stat().st_size for f in sorted(store_dir.rglob("*"))
             if f.is_file() and f.name != INPUTS_FILE and not f.name.endswith(".lock") and f.stat().st_size}
    sample = int(os.environ.get("KG_FLIP_SAMPLE", "700"))
    total = sum(files.values())
    out = []
    for name, size in files.items():
        if sample == 0 or size <= 16:
            out.extend((name, i) for i in range(size))
        else:
            k = min(size, max(16, sample * size // total))
            out.extend((name, i) for i in sorted(rng.sample(range(size), k)))
    return out


PARTS = int(os.environ.get("KG_FLIP_PARTS", "1"))


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
def test_every_flipped_byte_is_the_right_answer_or_a_clear_error(tmp_path: Path, tiny: Path, part: int) -> None:
    store_dir = _copy(tiny, tmp_path / "s")
    want = _answers(store_dir)
    rng = random.Random(33)
    cases = _positions(store_dir, rng)[part::PARTS]
    outcomes: Counter[tuple[str, str]] = Counter()
    bad: list[str] = []
    harmless: list[str] = []  # flips in the snapshot that read back right: which bytes
    for name, at in cases:
        f = store_dir / name
        mask = rng.randrange(1, 256)
        _flip(f, at, mask)
        try:
            got = _answers(store_dir)
        except StoreError as exc:
            msg = str(exc)
            named = str(f) in msg or (FULLTEXT_DIR in name and str(store_dir / FULLTEXT_DIR) in msg)
            if named and HINT in msg and "\n" not in msg:
                outcomes[name.split("/")[0], "clear error"] += 1
            else:
                bad.append(f"{name}@{at}^{mask:#x}: unclear error: {msg}")
        except Exception as exc:  # noqa: BLE001 - what the test is looking for
            bad.append(f"{name}@{at}^{mask:#x}: {type(exc).__name__}: {exc}")
        else:
            if got == want:
                outcomes[name.split("/")[0], "right answer"] += 1
                if name == SNAPSHOT_FILE:
                    harmless.append(f"{at}^{mask:#x}")
            else:
                diff = [k for k in want if got[k] != want[k]]
                bad.append(f"{name}@{at}^{mask:#x}: WRONG ANSWER in {diff}")
        finally:
            _flip(f, at, mask)
    sizes = {f.name: f.stat().st_size for f in sorted(store_dir.rglob("*")) if f.is_file()}
    if report := os.environ.get("KG_FLIP_REPORT"):  # figures of each part (pytest -n hides what workers print)
        with open(report, "a") as fh:
            fh.write(json.dumps({"part": part, "flips": len(cases), "bad": len(bad), "sizes": sizes,
                                 "outcomes": {f"{k[0]}: {k[1]}": n for k, n in sorted(outcomes.items())}}) + "\n")
    print(f"\nflipped {len(cases)} bytes of {sizes}:", dict(sorted(outcomes.items())), f"bad: {len(bad)}; "
          f"snapshot bytes read back right: {harmless[:20]}")
    assert not bad, "\n".join(bad[:40])
    assert _answers(store_dir) == want


def test_a_flipped_log_byte_is_a_right_rebuild_or_a_clear_error(tmp_path: Path, tiny: Path, extractor: Any) -> None:
    """The extraction log is what a damaged store is derived from: damage to it is reported, or harmless."""
    want = graph_dump(tiny)
    rng = random.Random(7)
    log = (tiny / INPUTS_FILE).read_bytes()
    outcomes: Counter[str] = Counter()
    bad = []
    for at in sorted(rng.sample(range(len(log)), 40)):
        store_dir = _copy(tiny, tmp_path / f"s{at}")
        mask = rng.randrange(1, 256)
        _flip(store_dir / INPUTS_FILE, at, mask)
        try:
            with EmbeddedStore(store_dir, writable=True) as s:
                build([], s, extractor=lambda: extractor, on_skip=lambda s: None)
            got = graph_dump(store_dir)
        except StoreError as exc:
            outcomes["clear error"] += 1
            assert str(store_dir / INPUTS_FILE) in str(exc), exc
        else:
            outcomes["right answer" if got == want else "wrong"] += 1
            if got != want:
                bad.append(f"{at}^{mask:#x}")
        shutil.rmtree(store_dir)
    print("\nflipped 40 log bytes:", dict(outcomes))
    assert not bad, bad
