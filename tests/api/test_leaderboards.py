"""GET /leaderboards/{dataset} (issue 34): a dataset's results ranked per metric, over a hand-made corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from results_corpus import results_inputs

from api.main import create_app
from api.settings import Settings
from kg.cache import record_hash
from kg.graph import derive_graph
from kg.store.embedded import EmbeddedStore


@pytest.fixture(scope="module")
def results_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("results-api")
    inputs = results_inputs()
    with EmbeddedStore(path, writable=True) as store:
        store.cache.append((record_hash(p.record), p) for p in inputs.values())
        store.replace_graph(derive_graph(inputs.values()), inputs)
    return path


@pytest.fixture(scope="module")
def rclient(results_store_dir: Path) -> Iterator[TestClient]:
    with EmbeddedStore(results_store_dir) as store, \
            TestClient(create_app(Settings(store_dir=str(results_store_dir)), store=store)) as c:
        yield c


def test_a_leaderboard_ranks_each_metric(rclient: TestClient) -> None:
    r = rclient.get("/leaderboards/GSM8K")
    assert r.status_code == 200
    body = r.json()
    assert body["dataset"]["id"] == "gsm8k" and body["kind"] == "score" and body["results"] == {"score": 7}
    acc = body["groups"][0]
    assert (acc["metric"], acc["direction"], acc["ranked"], acc["unit"], acc["total"]) == (
        "accuracy", "higher", True, "percent", 4)
    assert [(x["rank"], x["text"], x["system"], x["year"]) for x in acc["rows"]] == [
        (1, "94.1%", "TinyMath", 2025), (2, "92.3%", "GraphZip", 2024), (3, "91.0%", "GraphZip", 2025),
        (4, "89.5%", "SlowNet", 2025)]
    assert all(x["sentence"] and x["paper_id"] and x["paper_title"] for x in acc["rows"])
    err = next(g for g in body["groups"] if g["metric"] == "error rate")
    assert err["direction"] == "lower"


def test_filters_limits_and_kinds(rclient: TestClient) -> None:
    body = rclient.get("/leaderboards/gsm-8k", params={"metric": "Accuracy", "limit": 1}).json()
    assert [g["metric"] for g in body["groups"]] == ["accuracy"] and len(body["groups"][0]["rows"]) == 1
    assert body["metric"] == "Accuracy" and body["groups"][0]["total"] == 4
    gains = rclient.get("/leaderboards/GSM8K", params={"kind": "gain"}).json()
    assert gains["groups"] == [] and "7 scores" in gains["note"]
    assert rclient.get("/leaderboards/GSM8K", params={"kind": "best"}).status_code == 422
    assert rclient.get("/leaderboards/GSM8K", params={"limit": 0}).status_code == 422


def test_unknown_names_are_404_with_a_message(rclient: TestClient) -> None:
    r = rclient.get("/leaderboards/GSM9K")
    assert r.status_code == 404 and r.json() == {"detail": "no entity with id, name or alias 'GSM9K'",
                                                 "error": "NotFoundError"}
    r = rclient.get("/leaderboards/GSM8K", params={"metric": "BLEU"})
    assert r.status_code == 404
    assert r.json()["detail"].startswith("no score results on GSM8K in metric 'BLEU'; its metrics: accuracy")


def test_the_route_is_documented(rclient: TestClient) -> None:
    spec = rclient.get("/openapi.json").json()
    op = spec["paths"]["/leaderboards/{dataset_ref}"]["get"]
    assert {p["name"] for p in op["parameters"]} == {"dataset_ref", "metric", "kind", "limit"}
    assert "404" in op["responses"]
