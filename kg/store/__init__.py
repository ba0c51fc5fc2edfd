"""Graph stores: the embedded NetworkX store (default) and Neo4j over Bolt, behind one interface."""

from __future__ import annotations

import importlib
from typing import Any

from kg.errors import StoreError
from kg.store.base import Store

# Backends by name -> "module:Class", imported on first use so a missing optional package only
# matters to the user who asks for that backend.
REGISTRY = {
    "embedded": "kg.store.embedded:EmbeddedStore",
    "neo4j": "kg.store.neo4j:Neo4jStore",
}


def store_class(kind: str) -> type[Store]:
    try:
        target = REGISTRY[kind]
    except KeyError:
        raise StoreError(f"unknown store '{kind}'; choose one of: {', '.join(REGISTRY)}") from None
    module, _, name = target.partition(":")
    try:
        cls: type[Store] = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise StoreError(f"the '{kind}' store needs a package that is not installed: {exc.name}") from exc
    return cls


__all__ = ["REGISTRY", "Store", "store_class", "Any"]
