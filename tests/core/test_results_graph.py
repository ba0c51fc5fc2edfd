"""Reported results in the graph (issue 34): Result nodes, their edges and values; leaderboards ranked per metric."""

from __future__ import annotations

import json

import pytest
from results_corpus import results_inputs

from kg.cache import record_hash
from kg.errors import InputError, NotFoundError
from kg.graph import derive_graph
from kg.leaderboard import build_leaderboard, leaderboard, metric_direction
from kg.reported import RESULT_EDGE_TYPES, parse_value
from kg.store.embedded import EmbeddedStore


@pytest.fixture(scope="module")
def graph():
    return derive_graph(results_inputs().values())


@pytest.fixture(scope="module")
def reads(graph, tmp_path_factory):
    """An embedded store holding the corpus, written and read back from disk (its snapshot)."""
    path = tmp_path_factory.mktemp("results-store")
    inputs = results_inputs()
    with EmbeddedStore(path, writable=True) as store:
        store.cache.append((record_hash(p.record), p) for p in inputs.values())
        store.replace_graph(graph, inputs)
    with EmbeddedStore(path) as store:
        yield store


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("92.3%", 92.3, "percent"), ("92.3 %", 92.3, "percent"), ("+4.5%", 4.5, "percent"), ("0.412", 0.412, "number"),
    ("3.2×", 3.2, "ratio"), ("7x", 7.0, "ratio"), ("×1.5", 1.5, "ratio"), ("4.5", 4.5, "number"),
    ("1,024", 1024.0, "number"), ("12,345.6", 12345.6, "number"), ("0,5", 0.5, "number"),
    ("\u22122.1", -2.1, "number"), ("1.5e-3", 0.0015, "number"), ("n/a", None, "number")])
def test_values_are_parsed_with_their_unit(text, value, unit) -> None:
    assert parse_value(text) == (value, unit)


def test_each_result_is_a_node_with_its_value_and_sentence(graph) -> None:
    r = graph.nodes["result:kg2024a:0"]
    assert r == {"label": "Result", "id": "result:kg2024a:0", "name": "GraphZip: 92.3% accuracy on GSM8K",
                 "text": "92.3%", "value": 92.3, "unit": "percent", "kind": "score", "system": "GraphZip",
                 "dataset": "GSM8K", "metric": "accuracy",
                 "sentence": "GraphZip achieves 92.3% accuracy on GSM8K and an MRR of 0.412 on FB15k-237.",
                 "start": 67, "end": 72, "paper": "kg2024a", "year": 2024}
    abstract = graph.nodes["kg2024a"]["abstract"]
    assert abstract[r["start"] : r["end"]] == "92.3%"
    gain = graph.nodes["result:kg2024a:2"]
    assert (gain["kind"], gain["value"], gain["unit"], gain["text"]) == ("gain", 3.2, "ratio", "3.2×")
    assert "dataset" not in gain and "metric" not in gain  # absent, as Neo4j holds a null
    assert sum(1 for _, d in graph.nodes(data=True) if d["label"] == "Result") == 10


def _edges(graph, rid: str) -> dict[str, str]:
    return {d["type"]: v for _, v, d in graph.out_edges(rid, data=True)}


def test_results_link_paper_system_dataset_and_metric(graph) -> None:
    assert ("kg2024a", "result:kg2024a:0") in {(u, v) for u, v, t in graph.edges(data="type") if t == "REPORTS"}
    assert _edges(graph, "result:kg2024a:0") == {"ACHIEVED_BY": "graphzip", "ON_DATASET": "gsm8k",
                                                 "IN_METRIC": "accuracy"}
    assert _edges(graph, "result:kg2024a:1") == {"ACHIEVED_BY": "graphzip", "ON_DATASET": "fb15k237",
                                                 "IN_METRIC": "mrr"}
    # "our model": no system named, so the paper's one proposed entity
    assert _edges(graph, "result:kg2025b:0")["ACHIEVED_BY"] == "tinymath"
    assert "system" not in graph.nodes["result:kg2025b:0"]
    # a baseline's own number is the baseline's
    assert _edges(graph, "result:kg2025b:1")["ACHIEVED_BY"] == "graphzip"
    for _, _, d in graph.edges(data=True):
        if d["type"] in RESULT_EDGE_TYPES:
            assert d["paper_id"].startswith("kg20")


def test_slots_no_mention_names_join_the_resolved_entity(graph) -> None:
    # kg2025c's extraction has no mention of GSM-8K, accuracy or error rate: the results' spans link to the nodes
    # entity resolution makes of them, GSM-8K to the GSM8K every other paper names.
    assert _edges(graph, "result:kg2025c:0") == {"ACHIEVED_BY": "slownet", "ON_DATASET": "gsm8k",
                                                 "IN_METRIC": "accuracy"}
    assert graph.nodes["gsm8k"]["label"] == "Dataset" and "GSM-8K" in graph.nodes["gsm8k"]["aliases"]
    assert graph.nodes["error-rate"]["label"] == "Metric"
    assert graph.nodes["top1-accuracy"]["label"] == "Metric"  # another metric than accuracy: another node
    # and the paper evaluates on the dataset, the result's sentence as evidence
    ev = graph.get_edge_data("kg2025c", "gsm8k")["EVALUATES_ON"]
    assert ev["sentence"] == "SlowNet reaches 89.5% accuracy and an error rate of 5.9% on GSM-8K."


def test_papers_without_results_derive_as_before() -> None:
    bare = derive_graph(results_inputs(with_results=False).values())
    full = derive_graph(results_inputs().values())
    assert not any(d["label"] == "Result" for _, d in bare.nodes(data=True))
    assert not any(t in RESULT_EDGE_TYPES for _, _, t in bare.edges(data="type"))
    for n in ("kg2024d",):  # a paper without results: its node and edges as before
        assert bare.nodes[n] == full.nodes[n]
        assert sorted(bare.out_edges(n, keys=True)) == sorted(full.out_edges(n, keys=True))


def test_entity_reads_skip_results(reads) -> None:
    e = reads.get_entity("gsm8k")
    assert {p.paper.id for p in e.papers} == {"kg2024a", "kg2025b", "kg2025c", "kg2024d"}
    assert all(not nb.entity.id.startswith("result:") for nb in e.neighbours)
    view = reads.neighbourhood("gsm8k", hops=2)
    assert not any(n["label"] == "Result" for n in view.nodes)
    with pytest.raises(NotFoundError):
        reads.neighbourhood("result:kg2024a:0")
    assert reads.stats().results == 10 and reads.stats().edges_by_type["REPORTS"] == 10


@pytest.mark.parametrize(("names", "direction"), [
    (["accuracy"], "higher"), (["top-1 accuracy"], "higher"), (["Top-5 error"], "lower"), (["WER"], "lower"),
    (["word error rate"], "lower"), (["F1 score"], "higher"), (["Hits@10"], "higher"), (["BLEU-4"], "higher"),
    (["FID"], "lower"), (["Fréchet Inception Distance"], "lower"), (["perplexity"], "lower"),
    (["inference latency"], "lower"), (["mIoU"], "higher"), (["NoveltyScore"], None), ([None], None),
    (["novelty", "FID"], "lower")])
def test_metric_directions(names, direction) -> None:
    assert metric_direction(names) == direction


def test_leaderboard_ranks_each_metric_in_its_direction(reads) -> None:
    lb = leaderboard(reads, "gsm-8k")  # any name or alias, as kg entity takes
    assert lb.dataset.id == "gsm8k" and lb.results == {"score": 7} and lb.kind == "score"
    acc = lb.groups[0]
    assert (acc.metric, acc.metric_id, acc.kind, acc.unit, acc.direction, acc.ranked, acc.total) == (
        "accuracy", "accuracy", "score", "percent", "higher", True, 4)
    assert [(r.rank, r.text, r.value, r.system, r.year, r.paper_id) for r in acc.rows] == [
        (1, "94.1%", 94.1, "TinyMath", 2025, "kg2025b"), (2, "92.3%", 92.3, "GraphZip", 2024, "kg2024a"),
        (3, "91.0%", 91.0, "GraphZip", 2025, "kg2025b"), (4, "89.5%", 89.5, "SlowNet", 2025, "kg2025c")]
    assert acc.rows[0].sentence == "Our model reaches 94.1% accuracy on GSM8K, while GraphZip reaches 91.0% accuracy."
    assert acc.rows[0].paper_title == "Paper kg2025b" and acc.rows[0].result_id == "result:kg2025b:0"
    by_metric = {g.metric: g for g in lb.groups}
    assert by_metric["error rate"].direction == "lower" and by_metric["error rate"].rows[0].rank == 1
    assert by_metric["top-1 accuracy"].metric_id == "top1-accuracy"  # never ranked with accuracy
    novelty = by_metric["NoveltyScore"]
    assert (novelty.ranked, novelty.direction, novelty.rows[0].rank) == (False, None, None)


def test_leaderboard_filters_and_limits(reads) -> None:
    lb = leaderboard(reads, "GSM8K", metric="Accuracy", limit=2)
    assert [g.metric for g in lb.groups] == ["accuracy"] and lb.groups[0].total == 4
    assert [r.rank for r in lb.groups[0].rows] == [1, 2]
    with pytest.raises(NotFoundError, match="no score results on GSM8K in metric 'BLEU'; its metrics: accuracy"):
        leaderboard(reads, "GSM8K", metric="BLEU")
    with pytest.raises(NotFoundError):
        leaderboard(reads, "no such dataset")
    with pytest.raises(InputError):
        leaderboard(reads, "GSM8K", kind="best")
    gains = leaderboard(reads, "GSM8K", kind="gain")
    assert gains.groups == [] and "7 scores" in gains.note


def _row(paper, system, value, *, text=None, kind="score", unit="percent", metric="accuracy", year=2025, start=0):
    return {"id": f"result:{paper}:{start}", "value": value, "unit": unit, "text": text or f"{value}%", "kind": kind,
            "system": system, "metric": metric, "sentence": f"{system} gets {value}.", "year": year, "paper": paper,
            "start": start, "metric_id": None, "metric_name": None, "metric_key": None, "metric_aliases": None,
            "system_id": None, "system_name": None, "title": paper}


def test_one_row_per_paper_and_system_ties_share_a_rank_and_units_never_mix() -> None:
    from kg.models import EntityRef

    ent = EntityRef(id="d", name="D", type="dataset", paper_count=3)
    rows = [_row("p1", "A", 80.0, start=1), _row("p1", "A", 85.0, start=9), _row("p2", "B", 85.0),
            _row("p3", "C", 0.9, text="0.9", unit="number"), _row("p3", None, 70.0, start=5),
            _row("p4", "D", 60.0, metric="Acc.")]
    lb = build_leaderboard(ent, rows)
    # the percent and the fraction are two groups, though both name accuracy; "Acc." is no metric entity here
    assert [(g.metric, g.unit, g.total) for g in lb.groups] == [("accuracy", "percent", 3), ("Acc.", "percent", 1),
                                                                ("accuracy", "number", 1)]
    assert [(r.rank, r.system, r.value, r.results) for r in lb.groups[0].rows] == [
        (1, "A", 85.0, 2), (1, "B", 85.0, 1), (3, None, 70.0, 1)]
    gains = build_leaderboard(ent, [_row("p1", "A", 2.0, kind="gain"), _row("p2", "B", 5.0, kind="gain")],
                              kind="gain")
    assert [(r.rank, r.system) for r in gains.groups[0].rows] == [(None, "B"), (None, "A")]
    assert not gains.groups[0].ranked and "not ranked" in gains.note


# -- kg leaderboard -----------------------------------------------------------------------------------------------
def _kg(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from kg.cli.main import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_kg_leaderboard_prints_a_table_per_metric(reads, capsys) -> None:
    code, out, err = _kg(capsys, "leaderboard", "GSM8K", "--store-dir", str(reads.path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "GSM8K  [dataset, gsm8k] · 7 scores"
    assert "accuracy · score in percent · higher is better · 4 rows" in lines
    assert "error rate · score in percent · lower is better · 1 row" in lines
    assert "NoveltyScore · score in number · direction unknown, not ranked · 1 row" in lines
    header = lines.index("accuracy · score in percent · higher is better · 4 rows") + 1
    assert lines[header].split() == ["rank", "value", "system", "year", "paper", "title", "sentence"]
    assert lines[header + 2].split()[:5] == ["1", "94.1%", "TinyMath", "2025", "kg2025b"]
    assert "Our model reaches 94.1% accuracy on GSM8K" in lines[header + 2]
    assert err.strip() == "7 rows in 4 groups"
    code, out, err = _kg(capsys, "leaderboard", "GSM8K", "--metric", "accuracy", "--limit", "1", "--json",
                         "--store-dir", str(reads.path))
    data = json.loads(out)
    assert code == 0 and [g["metric"] for g in data["groups"]] == ["accuracy"]
    assert data["groups"][0]["total"] == 4 and [r["text"] for r in data["groups"][0]["rows"]] == ["94.1%"]
    row = data["groups"][0]["rows"][0]
    assert {"year", "paper_id", "paper_title", "system", "text", "value", "sentence"} <= row.keys()


def test_kg_leaderboard_unknown_names_are_one_line(reads, capsys) -> None:
    code, out, err = _kg(capsys, "leaderboard", "GSM9K", "--store-dir", str(reads.path))
    assert (code, out) == (2, "")
    assert err.strip() == "kg: no entity with id, name or alias 'GSM9K'; did you mean: GSM8K?"
    code, out, err = _kg(capsys, "leaderboard", "GSM8K", "--metric", "BLEU", "--store-dir", str(reads.path))
    assert code == 2 and err.strip().startswith("kg: no score results on GSM8K in metric 'BLEU'; its metrics: ")
    code, out, err = _kg(capsys, "leaderboard", "GSM8K", "--kind", "gain", "--store-dir", str(reads.path))
    assert code == 0 and "no gain results on GSM8K; 7 scores" in err


def test_kg_stats_counts_results(reads, capsys) -> None:
    code, out, _ = _kg(capsys, "stats", "--store-dir", str(reads.path))
    assert code == 0 and "results   10" in out.splitlines() and "  REPORTS             10" in out.splitlines()
