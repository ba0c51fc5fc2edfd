"""Fixtures for the reliability suite: small corpora from the seeds and reference stores built without interruption.

The session fixtures ``extractor``, ``seeds_dir`` and ``seeds_store_dir`` come from tests/conftest.py.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from kg.build import build
from kg.readers import PaperRecord, read_papers
from kg.store.embedded import EmbeddedStore

from .helpers import graph_dump, write_jsonl


def _store_suite_fixtures() -> Any:
    """tests/store/conftest.py, loaded under its own name: its ArcadeDB Bolt server fixtures are reused here."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "store" / "conftest.py"
    spec = importlib.util.spec_from_file_location("kg_tests_store_conftest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_store_suite = _store_suite_fixtures()
bolt_server = _store_suite.bolt_server  # a second server when tests/store runs in the same session
bolt_driver = _store_suite.bolt_driver


@pytest.fixture(scope="session")
def seed_records(seeds_dir: Path) -> list[PaperRecord]:
    return [r for r in read_papers([seeds_dir]) if isinstance(r, PaperRecord)]


@pytest.fixture(scope="session")
def corpora(tmp_path_factory: pytest.TempPathFactory, seed_records: list[PaperRecord]) -> dict[str, Path]:
    """Two JSON Lines corpora from the seeds: ``a`` (the first 20 papers) and ``b`` (the next 20)."""
    root = tmp_path_factory.mktemp("corpora")

    def rows(recs: list[PaperRecord]) -> list[dict[str, Any]]:
        return [{"id": r.id, "abstract": r.abstract, "venue": r.venue, "year": r.year} for r in recs]

    return {"a": write_jsonl(root / "a.jsonl", rows(seed_records[:20])),
            "b": write_jsonl(root / "b.jsonl", rows(seed_records[20:40]))}


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, corpora: dict[str, Path], extractor: Any) -> dict[str, Path]:
    """Reference stores, built without interruption: ``a`` (corpus a) and ``ab`` (corpus a, then b)."""
    root = tmp_path_factory.mktemp("reference")
    quiet = {"extractor": lambda: extractor, "on_skip": lambda s: None}
    with EmbeddedStore(root / "a", writable=True) as s:
        build([corpora["a"]], s, **quiet)
    shutil.copytree(root / "a", root / "ab")
    with EmbeddedStore(root / "ab", writable=True) as s:
        build([corpora["b"]], s, **quiet)
    return {"a": root / "a", "ab": root / "ab"}


@pytest.fixture(scope="session")
def graph_bytes(built: dict[str, Path]) -> dict[str, bytes]:
    return {k: graph_dump(p) for k, p in built.items()}
