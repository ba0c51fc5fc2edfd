"""Graph stores: the embedded NetworkX store (default) and Neo4j over Bolt, behind one interface.

One registry names the kinds of store for the CLI (``--store``) and the API alike. Other packages add kinds the
way fsspec's registry takes filesystems: an entry point in the group ``kg.stores`` whose name is the kind and
whose value is ``"module:Class"``, a subclass of ``kg.store.base.Store``::

    [project.entry-points."kg.stores"]
    mystore = "mypackage.store:MyStore"

A class is imported on first use, so a missing optional package only matters to the user who asks for it.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points

from kg.errors import StoreError
from kg.store.base import Store, StoreOptions

BUILTIN = {
    "embedded": "kg.store.embedded:EmbeddedStore",
    "neo4j": "kg.store.neo4j:Neo4jStore",
}
ENTRY_POINT_GROUP = "kg.stores"


@cache
def registry() -> dict[str, str]:
    """Every kind of store by name -> ``"module:Class"``: kg's own, then those other packages declare (a
    package cannot replace a built-in kind)."""
    kinds = dict(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        kinds.setdefault(ep.name, ep.value)
    return kinds


def store_kinds() -> tuple[str, ...]:
    return tuple(registry())


def store_class(kind: str) -> type[Store]:
    try:
        target = registry()[kind]
    except KeyError:
        raise StoreError(f"unknown store '{kind}'; choose one of: {', '.join(registry())}") from None
    module, _, name = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise StoreError(f"the '{kind}' store needs a package that is not installed: {exc.name}") from exc
    except AttributeError:
        raise StoreError(f"the '{kind}' store's class {target} does not exist") from None
    if not (isinstance(cls, type) and issubclass(cls, Store)):
        raise StoreError(f"the '{kind}' store's class {target} is not a kg.store.base.Store")
    return cls


def open_store(options: StoreOptions, *, writable: bool = False, wait: bool = False) -> Store:
    """The store ``options`` names, opened; close it (or use it in a ``with`` block)."""
    return store_class(options.kind).open(options, writable=writable, wait=wait)


__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "Store", "StoreOptions", "open_store", "registry", "store_class",
           "store_kinds"]
