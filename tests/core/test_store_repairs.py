"""Stores left in odd states: a damaged extraction-log line, a graph.jsonl left beside a current snapshot, an
upgrade asked of a folder that holds no store. Each is one clear line or is put right, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson

from kg.store.embedded import GRAPH_FILE, INPUTS_FILE, EmbeddedStore


def run_kg(*args: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "kg", *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_kg_upgrade_of_a_folder_without_a_store_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    code, out, err = run_kg("upgrade", "--store-dir", str(tmp_path / "no-such-store"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "no kg store here" in err and "Traceback" not in err
    assert not (tmp_path / "no-such-store").exists()


def test_a_graph_jsonl_left_beside_a_current_snapshot_goes_at_the_next_build(tmp_path: Path,
                                                                             seeds_store_dir: Path) -> None:
    # What an upgrade killed after its snapshot was in place leaves: a stale second copy of the graph.
    store_dir = tmp_path / "s"
    shutil.copytree(seeds_store_dir, store_dir)
    (store_dir / ".lock").unlink(missing_ok=True)
    (store_dir / GRAPH_FILE).write_text('{"papers": {}}\n')
    EmbeddedStore(store_dir).close()  # reading leaves it: a reader does not write
    assert (store_dir / GRAPH_FILE).exists()
    with EmbeddedStore(store_dir, writable=True) as store:
        assert store.stats() == EmbeddedStore(seeds_store_dir).stats()
    assert not (store_dir / GRAPH_FILE).exists()


def test_a_damaged_extraction_log_line_is_one_clear_line(tmp_path: Path) -> None:
    papers = [{"id": f"p{i}", "title": f"Paper {i}", "year": 2024,
               "abstract": f"We fine-tune BERT on SQuAD and report F1 for question answering, run {i}."}
              for i in range(3)]
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in papers[:2]))
    store_dir = tmp_path / "s"
    code, _, err = run_kg("build", str(src), "--store-dir", str(store_dir), "--no-progress")
    assert code == 0, err
    log = store_dir / INPUTS_FILE
    lines = log.read_bytes().splitlines(keepends=True)
    obj = orjson.loads(lines[0])
    z = obj["z"]
    obj["z"] = z[:20] + ("A" if z[20] != "A" else "B") + z[21:]  # the line's JSON stays valid, its payload not
    log.write_bytes(orjson.dumps(obj) + b"\n" + b"".join(lines[1:]))
    before = (store_dir / "graph.snapshot").read_bytes()
    src.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in papers))
    code, _, err = run_kg("build", str(src), "--store-dir", str(store_dir), "--no-progress")
    assert code == 1 and "Traceback" not in err
    assert err.strip().count("\n") == 0 and "inputs.jsonl" in err and "damaged" in err
    assert (store_dir / "graph.snapshot").read_bytes() == before  # nothing stored is lost
