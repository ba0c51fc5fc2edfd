"""The `kg` command line as a user runs it: summaries, JSON output, and one-line errors without tracebacks."""

import json
import subprocess
import sys
from pathlib import Path

KG = [sys.executable, "-m", "kg"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*KG, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_build_prints_a_summary_and_show_commands_read_it(tmp_path: Path, seeds_dir: Path) -> None:
    store = str(tmp_path / "s")
    r = run("build", str(seeds_dir), "--store-dir", store)
    assert r.returncode == 0, r.stderr
    assert "read 57 papers" in r.stdout and "entities:" in r.stdout and "edges:" in r.stdout
    assert "Traceback" not in r.stderr

    stats = json.loads(run("stats", "--store-dir", store, "--json").stdout)
    assert stats["papers"] == 57 and stats["entities_by_type"]["dataset"] > 0
    text = run("stats", "--store-dir", store).stdout
    assert "papers" in text and "entities by type" in text

    ent = json.loads(run("entity", "STE", "--store-dir", store, "--json").stdout)
    assert ent["name"] == "Straight-Through Estimator" and "STE" in ent["aliases"]
    assert ent["papers"][0]["evidence"]["sentence"]

    pid = ent["papers"][0]["paper"]["id"]
    paper = json.loads(run("paper", pid, "--store-dir", store, "--json").stdout)
    assert paper["id"] == pid and "PROPOSES" in paper["entities"] or "USES" in paper["entities"]
    human = run("paper", pid, "--store-dir", store).stdout
    assert paper["title"] in human and "RELATED" in human


def test_user_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    store = str(tmp_path / "s")
    cases = [
        (("build", str(tmp_path / "missing.jsonl"), "--store-dir", store), "missing.jsonl: no such file"),
        (("stats", "--store-dir", str(tmp_path / "nothing")), "no graph here yet"),
    ]
    for args, expected in cases:
        r = run(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert expected in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_unknown_ids_exit_2(tmp_path: Path, seeds_store_dir: Path) -> None:
    r = run("entity", "no-such-thing-xyz", "--store-dir", str(seeds_store_dir))
    assert r.returncode == 2 and "no-such-thing-xyz" in r.stderr and "Traceback" not in r.stderr
    r = run("paper", "p-000", "--store-dir", str(seeds_store_dir))
    assert r.returncode == 2 and "'p-000'" in r.stderr


def test_partial_input_succeeds_and_nothing_readable_fails(tmp_path: Path) -> None:
    good = tmp_path / "mixed.jsonl"
    good.write_bytes(b'{"id": "x1", "abstract": "We use BERT for question answering."}\n{broken\n\xff\xfe\n')
    r = run("build", str(good), "--store-dir", str(tmp_path / "s"))
    assert r.returncode == 0, r.stderr
    assert f"{good}:2: skipped: malformed JSON" in r.stderr and f"{good}:3: skipped: not valid UTF-8" in r.stderr
    assert "read 1 paper " in r.stdout and "skipped 2" in r.stdout

    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n")
    r = run("build", str(bad), "--store-dir", str(tmp_path / "s"))
    assert r.returncode == 1 and "no paper could be read" in r.stderr
    # What was stored before is still there.
    assert json.loads(run("stats", "--store-dir", str(tmp_path / "s"), "--json").stdout)["papers"] == 1


def test_build_reads_every_example_format_and_map_names_columns(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    store = str(tmp_path / "s")
    r = run("build", str(examples), "--store-dir", store, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # A BibTeX entry and a Semantic Scholar paper lack abstracts: one line each, counted, the rest built.
    assert out["read"] == 12 and out["stats"]["papers"] == 12 and out["skipped"] == {"no abstract": 2}
    assert "refs.bib:22 (aboagye2024pretrained): skipped: no abstract" in r.stderr
    odd = tmp_path / "odd.csv"
    odd.write_text("Ref,Text of paper\nr1,We train a transformer on ImageNet.\n", encoding="utf-8")
    r = run("build", str(odd), "--store-dir", str(tmp_path / "t"))
    assert r.returncode == 1 and "odd.csv:1: skipped: no abstract column" in r.stderr
    assert "--map COLUMN=abstract" in r.stderr and "Traceback" not in r.stderr
    r = run("build", str(odd), "--store-dir", str(tmp_path / "t"), "--map", "Text of paper=abstract",
            "--map", "ref=id")
    assert r.returncode == 0 and "read 1 paper " in r.stdout, r.stderr
    assert json.loads(run("paper", "r1", "--store-dir", str(tmp_path / "t"), "--json").stdout)["id"] == "r1"
    r = run("build", str(odd), "--store-dir", str(tmp_path / "u"), "--map", "Ref=colour")
    assert r.returncode == 1 and r.stderr.strip() == (
        "kg: error: --map Ref=colour: expected COLUMN=FIELD with FIELD one of abstract, title, id, doi, arxiv_id, "
        "url, year, published, venue, authors")


def test_first_hour_papercuts(tmp_path: Path, seeds_store_dir: Path) -> None:
    import socket

    store = str(seeds_store_dir)
    # Output into folders that do not exist yet: made, not a FileNotFoundError.
    r = run("viz", "-o", str(tmp_path / "nodir" / "sub" / "o.html"), "--store-dir", store)
    assert r.returncode == 0 and (tmp_path / "nodir" / "sub" / "o.html").stat().st_size > 1000, r.stderr
    r = run("export", "--format", "jsonl", "-o", str(tmp_path / "a" / "b" / "g.jsonl"), "--store-dir", store)
    assert r.returncode == 0 and (tmp_path / "a" / "b" / "g.jsonl").exists(), r.stderr
    # A misspelt entity: the fuzzy search's suggestions, on the one error line.
    r = run("entity", "mutual informaton", "--store-dir", store)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "did you mean: mutual information" in r.stderr
    # Every wrapped line of an evidence quote but the first is aligned after the opening mark, not given another.
    text = run("entity", "STE", "--store-dir", store).stdout
    quoted = [ln for ln in text.splitlines() if ln.startswith(" " * 15)]
    assert len(quoted) >= 2 and quoted[0].startswith(" " * 15 + "“") and quoted[-1].endswith("”")
    assert all(ln.startswith(" " * 16) and "“" not in ln for ln in quoted[1:])
    # A port in use: one line saying so, and no "serving ..." before it.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run("serve", "--store-dir", store, "--port", str(port))
    assert r.returncode == 1 and "serving" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == (f"kg: error: cannot listen on 127.0.0.1:{port}: Address already in use; is another "
                                "kg serve running? choose another --port")
    # A failed build into a new folder leaves no folder behind (it held only .lock).
    r = run("build", str(tmp_path / "missing.jsonl"), "--store-dir", str(tmp_path / "new" / "store"))
    assert r.returncode == 1 and not (tmp_path / "new").exists()
