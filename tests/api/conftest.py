"""Fixtures for the API tests: one store built from seeds/ per session, an app over it, and a client factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.main import create_app
from api.settings import Settings
from kg.build import build
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore

SEEDS = Path(__file__).resolve().parents[2] / "seeds"

# Two papers whose ids hold ':' and '/', as arXiv ids and DOIs do, so the routes are tried on them.
ODD_PAPERS = [
    {"id": "arXiv:2401.00631", "title": "Mutual information estimation with a straight-through estimator",
     "year": 2024, "venue": "ICML", "authors": ["A. Author"],
     "abstract": "We propose a new estimator of mutual information (MI) for representation learning. "
                 "The estimator uses the Straight-Through Estimator (STE) to train discrete encoders and is "
                 "evaluated on CIFAR-10 image classification, where it improves accuracy."},
    {"id": "10.1000/xyz.123", "title": "Discrete encoders trained with mutual information",
     "year": 2023, "venue": "ICML", "authors": ["B. Author"],
     "abstract": "We study discrete encoders trained by maximizing mutual information (MI). We use the "
                 "Straight-Through Estimator (STE) and report accuracy on CIFAR-10 image classification."},
]


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("api")
    extra = root / "odd_ids.jsonl"
    extra.write_bytes(b"\n".join(orjson.dumps(p) for p in ODD_PAPERS) + b"\n")
    path = root / "store"
    with EmbeddedStore(path, writable=True) as store:
        build([SEEDS, extra], store, on_skip=lambda s: None)
    return path


@pytest.fixture(scope="session")
def store(store_dir: Path) -> Iterator[Store]:
    with EmbeddedStore(store_dir) as s:  # read-only, as `kg serve` opens it
        yield s


@pytest.fixture(scope="session")
def app(store: Store, store_dir: Path) -> FastAPI:
    return create_app(Settings(store_dir=str(store_dir)), store=store)


@pytest.fixture(scope="session")
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


@pytest.fixture
def make_client(store_dir: Path) -> Iterator[Callable[..., TestClient]]:
    """A client for a variant app: ``make_client(settings_overrides..., store=...)``; closed after the test."""
    opened: list[TestClient] = []

    def make(*, store: Store | None = None, **overrides: object) -> TestClient:
        settings = Settings(**{"store_dir": str(store_dir), **overrides})  # type: ignore[arg-type]
        c = TestClient(create_app(settings, store=store), raise_server_exceptions=False)
        c.__enter__()
        opened.append(c)
        return c

    yield make
    for c in opened:
        c.__exit__(None, None, None)
