"""`kg eval --dataset kg-gold` prints score.py's rows for each extractor side by side."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from kg.cli import cli as cli_main
from kg.cli import main

FIX = Path(__file__).parent / "fixtures"


@pytest.mark.slow
def test_kg_gold_table(tmp_path: Path) -> None:
    (tmp_path / "kg-gold").mkdir()
    shutil.copy(FIX / "kg_gold_gold.jsonl", tmp_path / "kg-gold" / "dev.jsonl")
    runner = CliRunner()
    res = runner.invoke(cli_main, ["eval", "--dataset", "kg-gold", "--data-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "kg-gold dev" in res.output and "12 gold entities" in res.output
    for row in ("  dataset", "untyped", "typed, method=model", "relations", "proposed", "typed", "words/s"):
        assert any(line.startswith(row) for line in lines), row
    header = next(line for line in lines if "shipped" in line)
    assert "recorded" not in header  # trained-10's figures are for the full dev split only
    assert "noun-chunk baseline" in header and "rules" in header
    res = runner.invoke(cli_main, ["eval", "--dataset", "kg-gold", "--data-dir", str(tmp_path), "--json"])
    got = orjson.loads(res.output)["kg-gold"]["shipped"]
    assert got["typed"]["gold"] == 12 and 0 <= got["typed"]["f1"] <= 100


def test_missing_gold_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", "kg-gold", "--data-dir", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert "dev.jsonl: gold data not found" in err and "Traceback" not in err
