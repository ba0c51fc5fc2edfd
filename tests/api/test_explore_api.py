"""/trends, /entities/{id}/timeline, /entities/{id}/landscape and ranked /papers?q= over HTTP: answers,
errors as elsewhere (404 naming the id, 422 naming the parameter), and their place in the OpenAPI document."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.routes.explore import LANDSCAPE_EXAMPLE, TIMELINE_EXAMPLE, TRENDS_EXAMPLE
from kg.models import EntityTimeline, Landscape, Trends
from kg.store.base import Store


def test_timeline_by_name_or_alias_and_404_naming_it(client: TestClient, store: Store) -> None:
    r = client.get("/entities/STE/timeline")
    assert r.status_code == 200
    body = r.json()
    assert body["entity"]["id"] == "straight-through-estimator"
    assert sum(p["papers"] for p in body["years"]) == body["papers"] - body["no_year"]
    r = client.get("/entities/no%20such%20thing/timeline")
    assert r.status_code == 404 and "no such thing" in r.json()["detail"]


def test_trends_answer_and_bad_periods_are_422(client: TestClient, store: Store) -> None:
    r = client.get("/trends", params={"from": "2023", "to": "2024", "min_count": 1, "limit": 3})
    assert r.status_code == 200
    body = r.json()
    assert body["before"]["label"] == "2023" and body["after"]["label"] == "2024"
    assert body == store.trends(before="2023", after="2024", min_count=1, limit=3).model_dump(mode="json")
    for params, says in [({"from": "2025-02-30"}, "2025-02-30"), ({"from": "2025", "to": "2024"}, "out of order"),
                         ({"from": "yesterday"}, "from"), ({"type": "paper"}, "type"), ({"limit": 0}, "limit")]:
        r = client.get("/trends", params=params)
        assert r.status_code == 422 and says in r.text, params


def test_landscape_of_a_task_and_422_for_a_method(client: TestClient, store: Store) -> None:
    task = store.list_entities(type="task", limit=1).items[0]
    r = client.get(f"/entities/{task.id}/landscape", params={"limit": 5, "cell_limit": 2})
    assert r.status_code == 200
    assert r.json() == store.landscape(task.id, limit=5, cell_limit=2).model_dump(mode="json")
    r = client.get("/entities/STE/landscape")
    assert r.status_code == 422 and "task or a dataset" in r.json()["detail"]


def test_papers_q_is_ranked_and_counts_every_match(client: TestClient) -> None:
    r = client.get("/papers", params={"q": "mutual information", "limit": 2})
    body = r.json()
    assert r.status_code == 200 and body["total"] >= 2 and len(body["items"]) == 2
    again = client.get("/papers", params={"q": "mutual information", "limit": 2, "offset": 1}).json()
    assert again["items"][0] == body["items"][1] and again["total"] == body["total"]
    phrase = client.get("/papers", params={"q": '"information mutual"'}).json()
    assert phrase["total"] < body["total"]  # a phrase needs its words in that order


def test_openapi_documents_the_explore_routes_with_examples(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/trends", "/entities/{entity_ref}/timeline", "/entities/{entity_ref}/landscape"):
        op = paths[path]["get"]
        assert op["description"] and "422" in op["responses"] and op["x-codeSamples"]
        assert "example" in op["responses"]["200"]["content"]["application/json"]
    assert "404" in paths["/entities/{entity_ref}/timeline"]["get"]["responses"]
    # The examples are valid answers.
    Trends(**TRENDS_EXAMPLE)
    EntityTimeline(**TIMELINE_EXAMPLE)
    Landscape(**LANDSCAPE_EXAMPLE)
