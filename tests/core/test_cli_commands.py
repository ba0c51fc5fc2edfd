"""Issue 32's command-line items: output folders made and checked first, `kg papers` and `kg entities`, `kg paper`
by title, `kg cypher --wide`, a missing module named by the command that needs it, library warnings logged."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kg.cli.main import COMMANDS, main
from kg.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]


def kg(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


# -- -o makes its folders, and a path that cannot be written fails before any slow work ----------------------


def _no_slow_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("slow work started before the output path was checked")

    monkeypatch.setattr("kg.extract.pipeline.Extractor", refuse)  # kg extract: the model
    monkeypatch.setattr("kg.cli.export.open_store", refuse)  # kg export: the store
    monkeypatch.setattr("kg.cli.viz.EmbeddedStore", refuse)  # kg viz: the store


def test_unwritable_outputs_fail_at_once_naming_the_path(tmp_path: Path, seeds_store_dir: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _no_slow_work(monkeypatch)
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "text": "We train BERT on SQuAD."}\n')
    afile = tmp_path / "afile"
    afile.write_text("")
    store = str(seeds_store_dir)
    bad = str(afile / "sub" / "out.x")
    for args in (["extract", str(inp), "-o", bad], ["export", "--format", "jsonl", "-o", bad, "--store-dir", store],
                 ["viz", "-o", bad, "--store-dir", store]):
        code, _, err = kg(capsys, *args)
        assert code == 1, args
        assert one_line(err) == f"kg: error: {bad}: cannot make directory {afile / 'sub'}: {afile} is a file", args
    code, _, err = kg(capsys, "export", "--format", "neo4j-csv", "-o", bad, "--store-dir", store)  # a folder
    assert code == 1 and one_line(err) == f"kg: error: {bad}: cannot make this directory: {afile} is a file"
    code, _, err = kg(capsys, "extract", str(inp), "-o", str(tmp_path))
    assert code == 1 and one_line(err) == f"kg: error: {tmp_path}: is a directory; give a file name to write"
    code, _, err = kg(capsys, "export", "--format", "neo4j-csv", "-o", str(afile), "--store-dir", store)
    assert code == 1 and one_line(err) == f"kg: error: {afile}: is a file; give a directory to write into"
    assert not (afile.parent / "sub").exists()


def test_outputs_go_into_folders_not_made_yet(tmp_path: Path, seeds_store_dir: Path, extractor: Any,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kg.extract.pipeline.Extractor", lambda: extractor)  # the session's, not another load
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "text": "We train BERT on SQuAD."}\n')
    out = tmp_path / "new" / "dir" / "out.jsonl"
    code, _, err = kg(capsys, "extract", str(inp), "-o", str(out))
    assert code == 0, err
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a"]
    code, stdout, _ = kg(capsys, "extract", str(inp))  # '-' (stdout) still the default
    assert code == 0 and json.loads(stdout)["id"] == "a"
    csv = tmp_path / "x" / "y" / "csv"
    code, _, err = kg(capsys, "export", "--format", "neo4j-csv", "-o", str(csv), "--store-dir", str(seeds_store_dir))
    assert code == 0 and any(csv.glob("*.csv")), err


# -- kg papers, kg entities ---------------------------------------------------------------------------------------


def test_papers_lists_filters_and_searches_as_the_library_does(seeds_store: EmbeddedStore, seeds_store_dir: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store_dir)
    code, out, err = kg(capsys, "papers", "--store-dir", store, "--limit", "3", "--json")
    assert code == 0, err
    assert [p["id"] for p in json.loads(out)] == [p.id for p in seeds_store.list_papers(limit=3).items]
    code, out, err = kg(capsys, "papers", "--store-dir", store, "--limit", "3")
    header = out.splitlines()[0].split()
    assert header == ["year", "venue", "title", "entities", "id"] and len(out.splitlines()) == 2 + 3
    assert err.strip() == "3 of 57 papers (--limit for more)"
    # QUERY: the words search of list_papers (the API's /papers?q=), best first.
    code, out, _ = kg(capsys, "papers", "quantized", "parameters", "--store-dir", store, "--json")
    expected = seeds_store.list_papers(q="quantized parameters", limit=20)
    assert expected.total >= 1 and [p["id"] for p in json.loads(out)] == [p.id for p in expected.items]
    # --year, --venue
    year = seeds_store.list_papers(limit=1).items[0].year
    code, out, _ = kg(capsys, "papers", "--year", str(year), "--venue", "neurips", "--store-dir", store, "--json",
                      "--limit", "100")
    got = json.loads(out)
    assert got and {p["year"] for p in got} == {year} and {p["venue"] for p in got} == {"NeurIPS"}
    assert len(got) == seeds_store.list_papers(year=year, limit=100).total


def test_papers_linked_to_every_entity_given(seeds_store: EmbeddedStore, seeds_store_dir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store_dir)
    llm = seeds_store.resolve_entity("LLM")
    code, out, err = kg(capsys, "papers", "--entity", "LLM", "--type-of-entity", "metric:accuracy",
                        "--store-dir", store, "--json", "--limit", "100")
    assert code == 0, err
    got = json.loads(out)
    both = [p.id for p in seeds_store.list_papers(entity=llm, limit=100).items
            if p.id in {q.id for q in seeds_store.list_papers(entity="accuracy", limit=100).items}]
    assert got and [p["id"] for p in got] == both  # the first entity's order, only papers linked to both
    assert len(both) < seeds_store.list_papers(entity=llm, limit=100).total
    # A type picks the entity of that type; a name whose entity is of another type is one line, exit 2.
    code, out, _ = kg(capsys, "papers", "--entity", "model:LLM", "--store-dir", store, "--json", "--limit", "100")
    assert code == 0 and len(json.loads(out)) == seeds_store.list_papers(entity=llm, limit=100).total
    code, _, err = kg(capsys, "papers", "--entity", "dataset:LLM", "--store-dir", store)
    assert code == 2 and one_line(err).startswith("kg: no dataset named 'LLM' ('large language models' is a model)")
    code, _, err = kg(capsys, "papers", "--entity", "mutual informaton", "--store-dir", store)
    assert code == 2 and "did you mean: mutual information" in one_line(err)


def test_entities_most_papers_first(seeds_store: EmbeddedStore, seeds_store_dir: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store_dir)
    code, out, err = kg(capsys, "entities", "--store-dir", store, "--json", "--limit", "10")
    assert code == 0, err
    got = json.loads(out)
    assert [e["id"] for e in got] == [e.id for e in seeds_store.list_entities(limit=10).items]
    counts = [e["paper_count"] for e in got]
    assert counts == sorted(counts, reverse=True) and len(got) == 10
    code, out, _ = kg(capsys, "entities", "--type", "dataset", "--store-dir", store, "--json", "--limit", "500")
    datasets = json.loads(out)
    assert datasets and {e["type"] for e in datasets} == {"dataset"}
    assert len(datasets) == seeds_store.stats().entities_by_type["dataset"]
    code, out, err = kg(capsys, "entities", "--type", "dataset", "--store-dir", store, "--limit", "2")
    assert out.splitlines()[0].split() == ["papers", "mentions", "type", "name", "id", "aliases"]
    assert out.splitlines()[2].split()[2:4] == ["dataset", datasets[0]["name"]] or datasets[0]["name"] in out
    assert err.strip() == f"2 of {len(datasets)} dataset entities (--limit for more)"
    code, _, err = kg(capsys, "entities", "--type", "gizmo", "--store-dir", store)
    assert code == 2 and "gizmo" in err


# -- kg paper by title or words -------------------------------------------------------------------------------


def test_paper_by_title_or_words(seeds_store: EmbeddedStore, seeds_store_dir: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store_dir)
    target = seeds_store.list_papers(q="quantized parameters", limit=1).items[0]
    by_id = kg(capsys, "paper", target.id, "--store-dir", store, "--json")[1]
    code, out, err = kg(capsys, "paper", target.title.upper(), "--store-dir", store, "--json")  # the title, any case
    assert code == 0 and out == by_id, err
    # Words only one paper holds, given unquoted.
    assert seeds_store.list_papers(q="quantized parameters").total == 1
    assert kg(capsys, "paper", "quantized", "parameters", "--store-dir", store, "--json")[1] == by_id
    # Words several papers hold: not a guess, but the best matches.
    page = seeds_store.list_papers(q="language models", limit=3)
    assert page.total > 1
    code, _, err = kg(capsys, "paper", "language models", "--store-dir", store)
    line = one_line(err)
    assert code == 2 and line.startswith(f"kg: 'language models' matches {page.total} papers")
    assert "did you mean: " in line and all(f"[{p.id}]" in line for p in page.items)
    # A misspelt title: the paper closest in meaning suggested; nothing alike: no suggestion.
    code, _, err = kg(capsys, "paper", "trainng neural netwrks with quantised parameters", "--store-dir", store)
    assert code == 2 and f"did you mean: {target.title} [{target.id}]" in one_line(err)
    code, _, err = kg(capsys, "paper", "p-000", "--store-dir", store)
    assert code == 2 and one_line(err) == "kg: no paper with id, title or words 'p-000'"


# -- kg cypher --wide ---------------------------------------------------------------------------------------------


def test_cypher_wide_shows_whole_cells(seeds_store: EmbeddedStore, seeds_store_dir: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    pid = seeds_store.list_papers(limit=1).items[0].id
    abstract = " ".join(seeds_store.get_paper(pid).abstract.split())
    assert len(abstract) > 60
    q = f"MATCH (p:Paper {{id: '{pid}'}}) RETURN p.abstract AS a"
    code, out, _ = kg(capsys, "cypher", q, "--store-dir", str(seeds_store_dir))
    cell = out.splitlines()[2]
    assert code == 0 and len(cell) == 60 and cell.endswith("…") and abstract.startswith(cell[:-1])
    code, out, _ = kg(capsys, "cypher", q, "--store-dir", str(seeds_store_dir), "--wide")
    assert code == 0 and out.splitlines()[2] == abstract


# -- a missing module is named by the command that needs it --------------------------------------------------


def kg_without(modules: list[str], *args: str) -> subprocess.CompletedProcess:
    """kg with ``modules`` made unimportable (``sys.modules[m] = None``), as if not installed."""
    code = (f"import sys\nfor m in {modules!r}:\n    sys.modules[m] = None\n"
            "from kg.cli import main\nsys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_a_missing_module_is_named_by_the_command(seeds_store_dir: Path) -> None:
    store = str(seeds_store_dir)
    for args in (["serve", "--store-dir", store], ["serve", "--help"]):
        r = kg_without(["fastapi", "uvicorn"], *args)
        assert r.returncode == 1 and r.stdout == "", args
        assert one_line(r.stderr) == "kg serve needs fastapi and uvicorn: pip install fastapi uvicorn", args
    r = kg_without(["fastapi_offline"], "serve", "--store-dir", store)
    assert r.returncode == 1 and one_line(r.stderr) == "kg serve needs fastapi_offline: pip install fastapi-offline"
    # One the store reads with: every command that opens a store names it, and all are still listed.
    r = kg_without(["scipy"], "stats", "--store-dir", store)
    assert r.returncode == 1 and one_line(r.stderr) == "kg stats needs scipy: pip install scipy"
    r = kg_without(["scipy", "fastapi"], "--help")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS) and "[needs scipy]" in r.stdout
    # One only found missing once the command runs (fastapi's own dependency): named then, still one line.
    r = kg_without(["starlette"], "serve", "--store-dir", store)
    assert r.returncode == 1 and one_line(r.stderr) == "kg serve needs starlette: pip install starlette"


def test_every_command_is_listed_and_loads() -> None:
    r = subprocess.run([sys.executable, "-m", "kg", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    listed = [line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert r.returncode == 0 and listed == sorted(COMMANDS) and "[needs" not in r.stdout


# -- library warnings go through logging; the CLI shows them as before -----------------------------------------


def test_skip_warnings_are_logged_not_printed(caplog: pytest.LogCaptureFixture,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from kg.build import SkipWarnings
    from kg.readers import Skip

    warn = SkipWarnings(per_reason=1)
    with caplog.at_level(logging.WARNING, logger="kg"):
        warn(Skip("f.jsonl:2", "malformed JSON", "unexpected character"))
        warn(Skip("f.jsonl:3", "malformed JSON", "unexpected character"))
        warn.finish()
    assert [(r.name, r.levelno) for r in caplog.records] == [("kg.build", logging.WARNING)] * 2
    assert caplog.records[0].getMessage() == Skip("f.jsonl:2", "malformed JSON", "unexpected character").message()
    assert caplog.records[1].getMessage() == "f.jsonl: 1 more skipped records not shown (1 malformed JSON)"
    assert capsys.readouterr().err == ""


def test_the_cli_shows_library_warnings_as_one_line_each(seeds_store_dir: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.store.embedded import EmbeddedStore as Store

    def stats(self: Store) -> Any:
        logging.getLogger("kg.store.embedded").warning("%s: something to know", "here")
        return real(self)

    real = Store.stats
    monkeypatch.setattr(Store, "stats", stats)
    code, out, err = kg(capsys, "stats", "--store-dir", str(seeds_store_dir))
    assert code == 0 and "papers" in out and err == "kg: warning: here: something to know\n"
    # The handler is kg's only while a command runs: the library, used alone, adds none.
    assert not logging.getLogger("kg").handlers
