"""`kg build/stats/entity/paper/export --store neo4j` against the Bolt server, configured by environment variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg.cache import ExtractionCache, record_hash
from kg.cli import main
from kg.extract.pipeline import EXTRACTOR_VERSION
from kg.graph import PaperInput
from kg.store.embedded import EmbeddedStore

pytestmark = pytest.mark.bolt


@pytest.fixture
def neo4j_env(bolt_server: Any, bolt_driver: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
              seed_inputs: dict[str, PaperInput]) -> Path:
    """NEO4J_* naming the cleared ``scratch`` database; a store dir whose cache already has the seeds."""
    bolt_driver.execute_query("MATCH (n) DETACH DELETE n", database_="scratch")
    for k, v in {"NEO4J_URI": bolt_server.uri, "NEO4J_USER": bolt_server.user,
                 "NEO4J_PASSWORD": bolt_server.password, "NEO4J_DATABASE": "scratch"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("KG_STORE", raising=False)
    ExtractionCache(tmp_path / "inputs.jsonl", EXTRACTOR_VERSION).append(
        (record_hash(p.record), p) for p in seed_inputs.values())
    return tmp_path


def kg(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_build_and_show_commands_work_on_neo4j(neo4j_env: Path, capsys: pytest.CaptureFixture[str],
                                               bolt_server: Any, seeds_dir: Path,
                                               reference: EmbeddedStore) -> None:
    rc, out, err = kg(capsys, "build", str(seeds_dir), "--store", "neo4j", "--store-dir", str(neo4j_env))
    assert rc == 0, err
    assert "read 57 papers (0 extracted, 57 unchanged)" in out
    assert f"store {bolt_server.uri} database scratch: {reference.stats().papers} papers" in out

    rc, out, _ = kg(capsys, "stats", "--store", "neo4j", "--json")
    assert rc == 0 and json.loads(out) == reference.stats().model_dump(mode="json")

    want = reference.get_entity(reference.resolve_entity("mutual information"), paper_limit=20, neighbour_limit=20)
    rc, out, _ = kg(capsys, "entity", "mutual information", "--store", "neo4j", "--json")
    assert rc == 0 and json.loads(out) == want.model_dump(mode="json")

    pid = want.papers[0].paper.id
    rc, out, _ = kg(capsys, "paper", pid, "--store", "neo4j")
    assert rc == 0 and reference.get_paper(pid).title in out

    q = "MATCH (p:Paper)-[:EVALUATES_ON]->(d:Dataset {name: $d}) RETURN count(p) AS n"
    rc, out, _ = kg(capsys, "cypher", q, "--param", "d=CIFAR-10", "--store", "neo4j", "--json")
    assert rc == 0 and json.loads(out)["rows"] == reference.cypher(q, {"d": "CIFAR-10"}).rows
    rc, out, err = kg(capsys, "cypher", "MATCH (n) DETACH DELETE n", "--store", "neo4j")
    assert rc == 1 and "not allowed" in err
    rc, out, _ = kg(capsys, "stats", "--store", "neo4j", "--json")
    assert json.loads(out)["papers"] == reference.stats().papers  # the refused query deleted nothing

    rc, out, _ = kg(capsys, "export", "--format", "neo4j-csv", "-o", str(neo4j_env / "csv"), "--store", "neo4j")
    assert rc == 0 and "neo4j-admin database import full" in out and (neo4j_env / "csv" / "nodes_Paper.csv").exists()


def test_a_wrong_password_is_one_line(neo4j_env: Path, capsys: pytest.CaptureFixture[str], bolt_server: Any,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_PASSWORD", "not-the-password")
    rc, out, err = kg(capsys, "stats", "--store", "neo4j")
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and bolt_server.uri in err and "refused user 'root'" in err


def test_kg_serve_answers_from_neo4j(neo4j_env: Path, capsys: pytest.CaptureFixture[str], seeds_dir: Path,
                                     reference: EmbeddedStore) -> None:
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    assert kg(capsys, "build", str(seeds_dir), "--store", "neo4j", "--store-dir", str(neo4j_env))[0] == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--store", "neo4j", "--store-dir", str(neo4j_env),
                             "--port", str(port), "--log-level", "warning"], env=os.environ.copy(),
                            stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert httpx.get(url + "/stats").json() == reference.stats().model_dump(mode="json")
        eid = reference.resolve_entity("STE")
        assert httpx.get(url + "/entities/STE").json()["id"] == eid
        r = httpx.post(url + "/cypher", json={"query": "MATCH (n) DETACH DELETE n"})
        assert r.status_code == 400 and httpx.get(url + "/stats").json()["papers"] == reference.stats().papers
    finally:
        proc.terminate()
        proc.wait(timeout=30)
