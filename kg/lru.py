"""A least-recently-used cache bounded by a size its caller assigns to each entry; safe across threads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class LRUCache:
    """Holds entries until their sizes add up past ``budget``, then drops the least recently used.

    Every entry counts at least 1, so many empty values are bounded too.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Any, value: Any, size: int) -> Any:
        """Store ``value`` (unless ``key`` is already held) and return it."""
        size = max(1, size)
        with self._lock:
            if key not in self._items:
                self._items[key] = (value, size)
                self._size += size
                while self._size > self.budget and len(self._items) > 1:
                    _, (_, s) = self._items.popitem(last=False)
                    self._size -= s
        return value
