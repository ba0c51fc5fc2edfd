"""The embedded store's snapshot: the store's one record of its graph, opened fast, and stores of older kg."""

from __future__ import annotations

import marshal
import random
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import orjson
import pytest
from test_extraction_log import plain  # tests/core is on sys.path (rootdir-relative imports)

from kg.errors import StoreError
from kg.graph import with_dates
from kg.store.embedded import GRAPH_FILE, INPUTS_FILE, SAVING_FILE, EmbeddedStore, write_graph
from kg.store.snapshot import SNAPSHOT_FILE, VERSION, FrozenGraph, Snapshot


def run_kg(*args: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "kg", *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def legacy_copy(seeds_store_dir: Path, dst: Path) -> Path:
    """The seeds store as a kg before snapshot version 4 left it without a snapshot: ``graph.jsonl`` alone, and
    the extraction log uncompressed."""
    shutil.copytree(seeds_store_dir, dst)
    store = EmbeddedStore(seeds_store_dir)
    graph = nx_copy(store.graph)
    with open(dst / GRAPH_FILE, "wb") as fh:
        write_graph(with_dates(graph, as_text=True), store._papers, fh)
    (dst / SNAPSHOT_FILE).unlink()
    (dst / ".lock").unlink(missing_ok=True)
    (dst / INPUTS_FILE).write_bytes(plain(dst / INPUTS_FILE))
    return dst


def nx_copy(g):
    import networkx as nx

    out = nx.MultiDiGraph()
    out.add_nodes_from((n, dict(d)) for n, d in g.nodes(data=True))
    out.add_edges_from((u, v, k, dict(d)) for u, v, k, d in g.edges(keys=True, data=True))
    return out


@pytest.fixture(scope="module")
def both(seeds_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedStore, EmbeddedStore]:
    """The seeds store opened from its snapshot, and an older kg's copy of it (read from graph.jsonl)."""
    plain = legacy_copy(seeds_store_dir, tmp_path_factory.mktemp("legacy") / "s")
    return EmbeddedStore(seeds_store_dir), EmbeddedStore(plain)


def test_the_graph_is_on_disk_once(seeds_store_dir: Path) -> None:
    assert (seeds_store_dir / SNAPSHOT_FILE).exists() and not (seeds_store_dir / GRAPH_FILE).exists()
    assert Snapshot(seeds_store_dir / SNAPSHOT_FILE).version == VERSION
    store = EmbeddedStore(seeds_store_dir)
    assert store.loaded_from == "snapshot" and isinstance(store.graph, FrozenGraph)


def test_a_store_of_an_older_kg_still_opens(both, capsys) -> None:
    plain = both[1]
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
              "MATCH (p:Paper)-[r]->(e) RETURN p.id, type(r), e.id, r.sentence ORDER BY p.id, e.id, type(r)",
              "CALL db.relationshipTypes()", "CALL db.propertyKeys()"]:
        assert snap.cypher(q, max_rows=10**6) == plain.cypher(q, max_rows=10**6), q


def test_the_snapshot_graph_is_read_only(both) -> None:
    import networkx as nx

    with pytest.raises(nx.NetworkXError):
        both[0].graph.add_node("x")


def test_evidence_that_is_no_span_of_an_abstract_is_kept_as_text(tmp_path: Path) -> None:
    """Sentences are stored as spans of their paper's abstract; one that is not (a graph made by hand) as text."""
    import networkx as nx

    from kg.related import RelatedIndex
    from kg.store.snapshot import write_snapshot

    g = nx.MultiDiGraph()
    g.add_node("p", id="p", label="Paper", abstract="First sentence. Second one.")
    g.add_node("q", id="q", label="Paper")
    g.add_node("e", id="e", label="Method")
    g.add_edge("p", "e", key="USES", type="USES", paper_id="p", sentence="Second one.")
    g.add_edge("q", "e", key="USES", type="USES", paper_id="q", sentence="Not in any abstract.")
    g.add_edge("e", "p", key="X|p", type="X", paper_id="p", sentence="")
    with open(tmp_path / SNAPSHOT_FILE, "wb") as fh:
        write_snapshot(g, RelatedIndex({}), {}, {"p": "h1"}, fh)
    snap = Snapshot(tmp_path / SNAPSHOT_FILE)
    frozen = snap.graph()
    assert snap.papers() == {"p": "h1"}
    assert {(u, v, d["sentence"]) for u, v, d in frozen.edges(data=True)} == {
        ("p", "e", "Second one."), ("q", "e", "Not in any abstract."), ("e", "p", "")}
    assert frozen._pred["e"]["q"]["USES"]["sentence"] == "Not in any abstract."


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage"])
def test_a_damaged_snapshot_is_one_clear_line(tmp_path: Path, seeds_store_dir: Path, damage: str) -> None:
    shutil.copytree(seeds_store_dir, tmp_path / "s")
    f = tmp_path / "s" / SNAPSHOT_FILE
    data = f.read_bytes()
    f.write_bytes({"truncate": data[: len(data) // 2], "empty": b"", "garbage": b"x" * 4096}[damage])
    code, out, err = run_kg("stats", "--store-dir", str(tmp_path / "s"))
    assert code != 0 and "Traceback" not in err and err.strip().count("\n") == 0
    assert str(f) in err and "snapshot" in err


def test_a_build_upgrades_a_store_of_an_older_kg(tmp_path: Path, seeds_store_dir: Path, extractor,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    from kg.build import build

    store_dir = legacy_copy(seeds_store_dir, tmp_path / "s")
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"id": "x1", "title": "T", "abstract": "We propose GradFix, a method for low-bit training '
                     'of large language models, evaluated on ImageNet."}\n')
    caplog.clear()
    with EmbeddedStore(store_dir, writable=True) as store:
        assert store._graph is None  # a build does not read the stored graph, only its papers' hashes
        build([extra], store, extractor=lambda: extractor)
    err = caplog.text  # the store logs it (kg.store.embedded); the CLI shows it as one 'kg: warning:' line
    assert err.count("a store made by an older kg") == 1 and "saving it in the current format" in err
    assert not (store_dir / GRAPH_FILE).exists()
    again = EmbeddedStore(store_dir)
    assert again.loaded_from == "snapshot"
    assert again.stats().papers == 58
    assert again.get_paper("x1").entities
    caplog.clear()
    EmbeddedStore(store_dir)
    assert "older kg" not in caplog.text


def test_kg_upgrade_rewrites_a_store_of_an_older_kg_with_the_same_graph(tmp_path: Path,
                                                                         seeds_store_dir: Path) -> None:
    store_dir = legacy_copy(seeds_store_dir, tmp_path / "s")
    code, out, err = run_kg("upgrade", "--store-dir", str(store_dir))
    assert code == 0, err
    assert "upgraded" in out and err.count("\n") == 1 and "older kg" in err
    assert not (store_dir / GRAPH_FILE).exists() and not (store_dir / SAVING_FILE).exists()
    assert (store_dir / INPUTS_FILE).read_bytes() == (seeds_store_dir / INPUTS_FILE).read_bytes()  # compressed
    upgraded, original = EmbeddedStore(store_dir), EmbeddedStore(seeds_store_dir)
    assert upgraded.loaded_from == "snapshot"
    assert upgraded.stats() == original.stats() and upgraded._papers == original._papers
    q = "MATCH (a)-[r]->(b) RETURN a.id, type(r), b.id, r.sentence, r.score ORDER BY a.id, b.id, type(r)"
    assert upgraded.cypher(q, max_rows=10**6) == original.cypher(q, max_rows=10**6)
    assert upgraded.search("language model") == original.search("language model")
    code, out, err = run_kg("upgrade", "--store-dir", str(store_dir))
    assert code == 0 and "already in the current format" in out


def test_damaged_edges_are_reported_not_decoded(tmp_path: Path, seeds_store_dir: Path) -> None:
    """Each node's edges carry a checksum: a flipped byte is a clear error (503 over HTTP), never a wrong answer."""
    from fastapi.testclient import TestClient

    from api.main import create_app
    from kg.errors import StoreError

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


@pytest.mark.parametrize("name", ["nodes", "papers", "topo_out_nbr", "sentence_spans"])
def test_a_damaged_section_is_caught_at_open(tmp_path: Path, seeds_store_dir: Path, name: str) -> None:
    from kg.errors import StoreError

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    f = tmp_path / "s" / SNAPSHOT_FILE
    start, _ = Snapshot(f).header["sections"][name]
    data = bytearray(f.read_bytes())
    data[start + 3] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=f"section {name}"):
        EmbeddedStore(tmp_path / "s")


def test_a_store_of_an_older_kg_says_how_to_upgrade_it(tmp_path: Path, seeds_store_dir: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    store_dir = legacy_copy(seeds_store_dir, tmp_path / "s")
    caplog.clear()
    EmbeddedStore(store_dir)
    err = caplog.text
    assert "there is no graph.snapshot" in err and f"kg upgrade --store-dir {store_dir}" in err


def _crash(*args, **kwargs):
    fh = args[-1]
    fh.write(b"KGSNAP\r\n" + b"\0" * 1000)  # half a snapshot in the temporary file, then killed
    raise KeyboardInterrupt


def test_a_save_interrupted_leaves_the_previous_graph_and_names_the_build(tmp_path: Path, seeds_store_dir: Path,
                                                                          monkeypatch, caplog, extractor) -> None:
    """The snapshot is replaced by a rename: a save stopped at any point before it leaves the previous one."""
    import kg.store.embedded as emb
    from kg.build import build

    shutil.copytree(seeds_store_dir, tmp_path / "s")
    before = (tmp_path / "s" / SNAPSHOT_FILE).read_bytes()
    store = EmbeddedStore(tmp_path / "s", writable=True)
    monkeypatch.setattr(emb, "write_snapshot", _crash)
    with pytest.raises(KeyboardInterrupt):
        store.replace_graph(nx_copy(EmbeddedStore(seeds_store_dir).graph), store.load_inputs())
    store.close()
    monkeypatch.undo()
    assert (tmp_path / "s" / SNAPSHOT_FILE).read_bytes() == before
    assert (tmp_path / "s" / SAVING_FILE).exists()
    caplog.clear()
    reopened = EmbeddedStore(tmp_path / "s")
    assert reopened.stats() == EmbeddedStore(seeds_store_dir).stats()
    assert [r.getMessage() for r in caplog.records if "stopped while saving" in r.getMessage()] == [
        f"{tmp_path / 's'}: the last `kg build` into this store was stopped while saving; this is the graph of the "
        f"build before it. Run that build again to finish it (its extractions are kept)."]
    with EmbeddedStore(tmp_path / "s", writable=True) as again:  # the next build finishes it
        build([], again, extractor=lambda: extractor)
    assert not (tmp_path / "s" / SAVING_FILE).exists() and not list((tmp_path / "s").glob(".*.tmp*"))
    caplog.clear()
    EmbeddedStore(tmp_path / "s")
    assert "stopped while saving" not in caplog.text


def test_a_first_build_stopped_while_saving_is_named(tmp_path: Path) -> None:
    from kg.errors import StoreError

    (tmp_path / "s").mkdir()
    (tmp_path / "s" / SAVING_FILE).touch()
    with pytest.raises(StoreError, match="the first `kg build` into this store was stopped while saving"):
        EmbeddedStore(tmp_path / "s")



def _copy_store(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".lock"))
    return dst / SNAPSHOT_FILE


def test_the_header_records_its_payload_format_and_python(seeds_store_dir: Path) -> None:
    header = Snapshot(seeds_store_dir / SNAPSHOT_FILE).header
    assert header["payload"] == {"encoding": "marshal", "marshal_version": 4,
                                 "python": "{}.{}".format(*sys.version_info[:2])}


def test_another_pythons_snapshot_is_refused_with_how_to_rebuild(seeds_store_dir: Path, tmp_path: Path) -> None:
    f = _copy_store(seeds_store_dir, tmp_path / "s")
    data = f.read_bytes()
    mine = '"python":"{}.{}"'.format(*sys.version_info[:2]).encode()
    other = b'"python":"2.7"'.ljust(len(mine))  # JSON allows the spaces; only the version and the CRC differ
    data = data.replace(mine, other, 1)
    hlen = int.from_bytes(data[-16:-8], "little")
    header = data[-20 - hlen : -20]
    data = data[: -20] + zlib.crc32(header).to_bytes(4, "little") + data[-16:]
    f.write_bytes(data)
    with pytest.raises(StoreError, match=r"was written by Python 2\.7 \(marshal 4\); this kg runs Python 3\.\d+, "
                       r"which may read it differently; rebuild the store: `kg build --store-dir .*` derives it "
                       r"again from its extraction log"):
        Snapshot(f)
    code, out, err = run_kg("build", "--store-dir", str(f.parent))  # which reads the papers from the log
    assert code == 0 and "read 0 papers" in out and "57 papers" in out, err
    assert Snapshot(f).header["payload"]["python"] == "{}.{}".format(*sys.version_info[:2])


@pytest.mark.parametrize("back", [21, 100, 1347])
def test_a_flipped_header_byte_is_damage_never_a_wrong_answer(seeds_store_dir: Path, tmp_path: Path,
                                                              back: int) -> None:
    f = _copy_store(seeds_store_dir, tmp_path / "s")
    data = bytearray(f.read_bytes())
    data[-back] ^= 0x20
    f.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged snapshot header"):
        Snapshot(f)


def _as_version_4(f: Path) -> None:
    """Rewrite a snapshot as kg wrote format 4: the same sections under a marshal header, no payload record."""
    data = f.read_bytes()
    hlen = int.from_bytes(data[-16:-8], "little")
    header = orjson.loads(data[-20 - hlen : -20])
    del header["payload"]
    header["version"] = 4
    raw = marshal.dumps(header, 4)
    f.write_bytes(data[: -20 - hlen] + raw + len(raw).to_bytes(8, "little") + b"KGSNAP\r\n")


def test_a_format_4_snapshot_is_read_and_kg_upgrade_writes_format_5(seeds_store_dir: Path, tmp_path: Path) -> None:
    f = _copy_store(seeds_store_dir, tmp_path / "s")
    _as_version_4(f)
    assert Snapshot(f).version == 4
    want = EmbeddedStore(seeds_store_dir).stats()
    assert EmbeddedStore(tmp_path / "s").stats() == want
    code, out, err = run_kg("upgrade", "--store-dir", str(tmp_path / "s"))
    assert code == 0 and "upgraded to the current format (snapshot format 5" in out, err
    assert Snapshot(f).version == VERSION == 5 and "payload" in Snapshot(f).header
    assert EmbeddedStore(tmp_path / "s").stats() == want
