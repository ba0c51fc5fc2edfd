"""The one exception family of kg; translated to exit codes and HTTP statuses only at the edges."""

from __future__ import annotations


class KGError(Exception):
    """Base class of every error kg raises on purpose."""


class InputError(KGError):
    """A user's input (file, record, option) is unusable; the message names where."""


class StoreError(KGError):
    """The store cannot be opened, read or written."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock."""


class NotFoundError(KGError):
    """An id or name the user asked for is not in the graph."""


class ModelError(KGError):
    """The NLP pipeline cannot be loaded."""
