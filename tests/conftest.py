"""Shared fixtures: the project paths, one spaCy-backed extractor, and a store built from seeds/ once."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    return SEEDS


@pytest.fixture(scope="session")
def extractor():
    from kg.extract.pipeline import Extractor

    return Extractor()


@pytest.fixture(scope="session")
def seeds_store_dir(tmp_path_factory: pytest.TempPathFactory, extractor) -> Path:
    """An embedded store built from seeds/ (read-only for tests: copy it before writing)."""
    from kg.build import build
    from kg.store.embedded import EmbeddedStore

    path = tmp_path_factory.mktemp("seeds-store")
    with EmbeddedStore(path, writable=True) as store:
        build([SEEDS], store, extractor=lambda: extractor)
    return path


@pytest.fixture(scope="session")
def seeds_store(seeds_store_dir: Path):
    from kg.store.embedded import EmbeddedStore

    return EmbeddedStore(seeds_store_dir)
