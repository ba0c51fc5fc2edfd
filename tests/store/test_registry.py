"""One store registry for the CLI and the API, open to other packages through the ``kg.stores`` entry points."""

from __future__ import annotations

import ast
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg.store
from kg.errors import StoreError
from kg.store import open_store, registry, store_class, store_kinds
from kg.store.base import Store, StoreOptions
from kg.store.embedded import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]


class PluginStore(EmbeddedStore):
    """Another package's store: here an embedded one under another name."""

    kind = "plugin"


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch):
    eps = [EntryPoint("plugin", f"{__name__}:PluginStore", "kg.stores"),
           EntryPoint("embedded", "os:path", "kg.stores"),  # may not replace a built-in kind
           EntryPoint("broken", f"{__name__}:NoSuchClass", "kg.stores"),
           EntryPoint("notastore", "os:PathLike", "kg.stores")]
    monkeypatch.setattr(kg.store, "entry_points", lambda group: eps if group == "kg.stores" else [])
    registry.cache_clear()
    yield
    registry.cache_clear()


def test_builtin_kinds() -> None:
    assert store_kinds()[:2] == ("embedded", "neo4j")
    assert store_class("embedded") is EmbeddedStore


def test_entry_point_adds_a_kind_but_cannot_replace_one(plugin: None) -> None:
    assert "plugin" in store_kinds()
    assert store_class("plugin") is PluginStore
    assert store_class("embedded") is EmbeddedStore
    with pytest.raises(StoreError, match="NoSuchClass does not exist"):
        store_class("broken")
    with pytest.raises(StoreError, match="is not a kg.store.base.Store"):
        store_class("notastore")
    with pytest.raises(StoreError, match="unknown store 'nope'; choose one of: embedded, neo4j, plugin"):
        store_class("nope")


def test_cli_and_api_open_a_plugin_store(plugin: None, tmp_path: Path) -> None:
    from api.main import open_store as api_open
    from api.settings import Settings
    from kg.cli import cli

    root = tmp_path / "s"
    papers = tmp_path / "papers.jsonl"
    papers.write_text('{"id": "p1", "title": "Adam for transformers", "abstract": "We train a transformer '
                      'with Adam on ImageNet and report top-1 accuracy."}\n')
    r = CliRunner().invoke(cli, ["build", str(papers), "--store", "plugin", "--store-dir", str(root),
                                 "--no-progress"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["stats", "--store", "plugin", "--store-dir", str(root), "--json"])
    assert r.exit_code == 0 and '"papers"' in r.output
    with api_open(Settings(store_kind="plugin", store_dir=str(root))) as store:
        assert isinstance(store, PluginStore) and store.fixed() and store.kind == "plugin"


def test_store_capabilities(seeds_store_dir: Path) -> None:
    with open_store(StoreOptions(store_dir=str(seeds_store_dir))) as store:
        assert store.fixed() and store.kind == "embedded" and store.info()["store"] == "embedded"
        assert store.whole_graph() is store.local_graph()
    with open_store(StoreOptions(store_dir=str(seeds_store_dir)), writable=True) as store:
        assert not store.fixed()  # a build is writing it


def _store_probes(path: Path) -> list[str]:
    """hasattr/getattr calls whose first argument names a store (``store``, ``self.store``, ``opened``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr"):
            target = ast.unparse(node.args[0]) if node.args else ""
            if target.split(".")[-1] == "store":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_caller_probes_a_store() -> None:
    """Callers use the capabilities ``Store`` declares, never ``hasattr(store, ...)``."""
    files = [*(ROOT / "kg").rglob("*.py"), *(ROOT / "api").rglob("*.py"), *(ROOT / "viz").rglob("*.py")]
    assert [p for f in files for p in _store_probes(f)] == []


def test_store_declares_what_callers_use() -> None:
    for name in ("open", "fixed", "local_graph", "whole_graph", "info", "cache", "kind"):
        assert hasattr(Store, name) or name in Store.__annotations__, name
