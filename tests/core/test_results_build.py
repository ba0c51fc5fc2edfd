"""End to end (issue 34): kg build on a few abstracts with reported results, then the graph and kg leaderboard.

The shipped extractor decides what is a result; the abstracts state each result in a plain sentence of its own so
the assertions hold for any reasonable model: a Result node per value, reported by its paper, its number parsed,
its sentence kept; leaderboards ranked in the metric's direction; an abstract without numbers reports nothing.
"""

from __future__ import annotations

import json

import pytest

from kg.cli.main import main

ABSTRACTS = [
    {"id": "e1", "year": 2024, "title": "GraphZip",
     "abstract": "We propose GraphZip, a graph compression method. GraphZip achieves 92.3% accuracy on GSM8K, "
                 "outperforming prior methods."},
    {"id": "e2", "year": 2025, "title": "TinyMath",
     "abstract": "We introduce TinyMath, a small reasoning model. TinyMath reaches 94.1% accuracy on GSM8K."},
    {"id": "e4", "year": 2025, "title": "PixelGen",
     "abstract": "We propose PixelGen, a diffusion model. PixelGen reaches an FID of 2.1 on ImageNet."},
    {"id": "e3", "year": 2025, "title": "No numbers", "abstract": "We study how language models solve GSM8K problems."},
]
ABSTRACT = {a["id"]: a["abstract"] for a in ABSTRACTS}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("results-build")
    src = tmp / "in.jsonl"
    src.write_text("".join(json.dumps(a) + "\n" for a in ABSTRACTS), encoding="utf-8")
    path = str(tmp / "store")
    assert main(["build", str(src), "--store-dir", path, "--no-progress"]) == 0
    return path


def _json(capsys: pytest.CaptureFixture[str], args: list[str], store: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json", "--store-dir", store]) == 0
    return json.loads(capsys.readouterr().out)


def _reported(capsys: pytest.CaptureFixture[str], store: str, paper: str) -> list[list]:
    q = (f"MATCH (p:Paper {{id: '{paper}'}})-[:REPORTS]->(r:Result) "
         "RETURN r.text, r.value, r.unit, r.kind, r.sentence, r.start, r.end, r.paper ORDER BY r.start")
    return _json(capsys, ["cypher", q], store)["rows"]


@pytest.mark.parametrize(("paper", "text", "value", "metric"), [
    ("e1", "92.3%", 92.3, "accuracy"), ("e2", "94.1%", 94.1, "accuracy"), ("e4", "2.1", 2.1, "FID")])
def test_each_stated_score_is_a_result_its_paper_reports(store: str, capsys: pytest.CaptureFixture[str],
                                                         paper: str, text: str, value: float, metric: str) -> None:
    rows = _reported(capsys, store, paper)
    row = next((r for r in rows if r[0] == text), None)
    assert row is not None, rows
    _, v, unit, kind, sentence, start, end, owner = row
    assert (v, unit, kind, owner) == (value, "percent" if text.endswith("%") else "number", "score", paper)
    abstract = ABSTRACT[paper]
    assert abstract[start:end] == text  # offsets into the paper's abstract
    assert sentence and text in sentence and sentence in abstract and metric in sentence
    for r in rows:  # every result the paper reports is a value of its abstract, with its sentence
        assert ABSTRACT[paper][r[5] : r[6]] == r[0] and r[4] and r[0] in r[4]


def test_an_abstract_without_numbers_reports_nothing(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _reported(capsys, store, "e3") == []


def test_leaderboards_rank_the_reported_scores(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    board = _json(capsys, ["leaderboard", "GSM8K"], store)
    acc = next(g for g in board["groups"] if g["metric"] == "accuracy")
    assert acc["ranked"]
    texts = [r["text"] for r in acc["rows"]]
    assert "94.1%" in texts and "92.3%" in texts and texts.index("94.1%") < texts.index("92.3%")  # higher first
    years = {r["text"]: r["year"] for r in acc["rows"]}
    assert (years["94.1%"], years["92.3%"]) == (2025, 2024)
    assert all(r["sentence"] and r["text"] in r["sentence"] for r in acc["rows"])
    fid = next(g for g in _json(capsys, ["leaderboard", "ImageNet"], store)["groups"] if g["metric"] == "FID")
    assert fid["direction"] == "lower" and 2.1 in [r["value"] for r in fid["rows"]]
