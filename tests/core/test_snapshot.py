"""The embedded store's snapshot: a served store reads it instead of graph.jsonl and answers every read alike."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kg.store.embedded import GRAPH_FILE, EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE, FrozenGraph


@pytest.fixture(scope="module")
def both(seeds_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedStore, EmbeddedStore]:
    """The seeds store opened from its snapshot, and a copy without one (read from graph.jsonl)."""
    plain = tmp_path_factory.mktemp("no-snapshot")
    shutil.copytree(seeds_store_dir, plain, dirs_exist_ok=True)
    (plain / SNAPSHOT_FILE).unlink()
    return EmbeddedStore(seeds_store_dir), EmbeddedStore(plain)


def test_a_served_store_opens_from_its_snapshot(both) -> None:
    snap, plain = both
    assert snap.loaded_from == "snapshot" and isinstance(snap.graph, FrozenGraph)
    assert plain.loaded_from == GRAPH_FILE and not isinstance(plain.graph, FrozenGraph)


def test_every_read_answers_as_from_graph_jsonl(both) -> None:
    snap, plain = both
    assert snap.stats() == plain.stats()
    assert snap.overview() == plain.overview()
    rng = random.Random(7)
    for p in rng.sample(plain.by_label("Paper"), 20):
        assert snap.get_paper(p) == plain.get_paper(p)
        assert snap.related_papers(p, k=7) == plain.related_papers(p, k=7)
        assert snap.neighbourhood(p, hops=2) == plain.neighbourhood(p, hops=2)
    for e in rng.sample(plain.entity_ids(), 60):
        assert snap.get_entity(e) == plain.get_entity(e)
        assert snap.related_entities(e) == plain.related_entities(e)
        assert snap.list_papers(entity=e) == plain.list_papers(entity=e)
    for q in ["MATCH (p:Paper)-[:USES]->(e)<-[:USES]-(q:Paper) WHERE p.id < q.id "
              "RETURN p.id, q.id, count(e) AS c ORDER BY c DESC, p.id, q.id LIMIT 25",
              "MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n, sum(r.start) AS s ORDER BY t",
              "MATCH (a)-[r:USED_FOR]->(b) RETURN a.name, r.sentence, b.name ORDER BY a.name, b.name LIMIT 50",
              "CALL db.relationshipTypes()", "CALL db.propertyKeys()"]:
        assert snap.cypher(q) == plain.cypher(q), q


def test_the_snapshot_graph_is_read_only(both) -> None:
    import networkx as nx

    with pytest.raises(nx.NetworkXError):
        both[0].graph.add_node("x")


def test_a_snapshot_that_no_longer_matches_is_ignored(tmp_path: Path, seeds_store_dir: Path, capsys) -> None:
    shutil.copytree(seeds_store_dir, tmp_path / "s")
    g = tmp_path / "s" / GRAPH_FILE
    lines = g.read_bytes().splitlines(keepends=True)
    g.write_bytes(b"".join(lines[:-1]))  # graph.jsonl changed (one edge fewer) after the snapshot was written
    store = EmbeddedStore(tmp_path / "s")
    assert store.loaded_from == GRAPH_FILE
    assert store.stats().edges == EmbeddedStore(seeds_store_dir).stats().edges - 1
    err = capsys.readouterr().err
    assert f"{SNAPSHOT_FILE} does not match {GRAPH_FILE}" in err and "Traceback" not in err


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage"])
def test_a_damaged_snapshot_falls_back_to_graph_jsonl(tmp_path: Path, seeds_store_dir: Path, damage: str,
                                                      capsys) -> None:
    shutil.copytree(seeds_store_dir, tmp_path / "s")
    f = tmp_path / "s" / SNAPSHOT_FILE
    data = f.read_bytes()
    f.write_bytes({"truncate": data[: len(data) // 2], "empty": b"", "garbage": b"x" * 4096}[damage])
    store = EmbeddedStore(tmp_path / "s")
    assert store.loaded_from == GRAPH_FILE
    assert store.stats() == EmbeddedStore(seeds_store_dir).stats()
    err = capsys.readouterr().err
    assert "reading graph.jsonl instead" in err and "Traceback" not in err and err.count("\n") == 1


def test_a_build_writes_a_fresh_snapshot(tmp_path: Path, seeds_store_dir: Path, extractor) -> None:
    from kg.build import build

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    (tmp_path / "s" / SNAPSHOT_FILE).unlink()
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"id": "x1", "title": "T", "abstract": "We propose GradFix, a method for low-bit training '
                     'of large language models, evaluated on ImageNet."}\n')
    with EmbeddedStore(tmp_path / "s", writable=True) as store:
        assert store._graph is None  # a build does not read the stored graph, only its papers' hashes
        build([extra], store, extractor=lambda: extractor)
    again = EmbeddedStore(tmp_path / "s")
    assert again.loaded_from == "snapshot"
    assert again.stats().papers == 58
    assert again.get_paper("x1").entities


def test_damaged_edges_are_reported_not_decoded(tmp_path: Path, seeds_store_dir: Path) -> None:
    """Each node's edges carry a checksum: a flipped byte is a clear error (503 over HTTP), never a wrong answer."""
    from fastapi.testclient import TestClient

    from api.main import create_app
    from kg.errors import StoreError
    from kg.store.snapshot import Snapshot

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    f = tmp_path / "s" / SNAPSHOT_FILE
    start, length = Snapshot(f).header["sections"]["out"]
    data = bytearray(f.read_bytes())
    for i in range(start, start + length, 97):  # damage every edge blob
        data[i] ^= 0x5A
    f.write_bytes(bytes(data))
    store = EmbeddedStore(tmp_path / "s")
    assert store.loaded_from == "snapshot"  # the node table is intact
    paper = store.by_label("Paper")[0]
    with pytest.raises(StoreError, match="damaged snapshot"):
        store.get_paper(paper)
    r = TestClient(create_app(store=store)).get(f"/papers/{paper}")
    assert r.status_code == 503 and "rebuild the store" in r.json()["detail"]


def test_a_damaged_section_is_caught_at_open(tmp_path: Path, seeds_store_dir: Path, capsys) -> None:
    from kg.store.snapshot import Snapshot

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    f = tmp_path / "s" / SNAPSHOT_FILE
    start, _ = Snapshot(f).header["sections"]["sentences"]
    data = bytearray(f.read_bytes())
    data[start + 3] ^= 0x01
    f.write_bytes(bytes(data))
    store = EmbeddedStore(tmp_path / "s")
    assert store.loaded_from == GRAPH_FILE
    assert "section sentences" in capsys.readouterr().err


def test_a_store_without_a_snapshot_says_how_to_get_one(tmp_path: Path, seeds_store_dir: Path, capsys) -> None:
    shutil.copytree(seeds_store_dir, tmp_path / "s")
    (tmp_path / "s" / SNAPSHOT_FILE).unlink()
    EmbeddedStore(tmp_path / "s")
    assert "there is no graph.snapshot" in capsys.readouterr().err


def test_a_save_removes_the_old_snapshot_before_replacing_the_graph(tmp_path: Path, seeds_store_dir: Path,
                                                                      monkeypatch) -> None:
    """Killed between the two writes, a store has no snapshot rather than one of the previous graph."""
    import kg.store.embedded as emb

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    store = EmbeddedStore(tmp_path / "s", writable=True)
    graph, inputs = store.graph, store.load_inputs()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # as if killed right after graph.jsonl was written

    monkeypatch.setattr(emb, "write_snapshot", crash)
    with pytest.raises(KeyboardInterrupt):
        store.replace_graph(graph, inputs)
    store.close()
    assert not (tmp_path / "s" / SNAPSHOT_FILE).exists()
    assert EmbeddedStore(tmp_path / "s").stats() == EmbeddedStore(seeds_store_dir).stats()
