"""STARTS WITH / ENDS WITH / CONTAINS over a whole string column at once: its values joined, searched by str.find.

A Python call per value costs about 0.4 µs; one ``find`` over the joined text skips from hit to hit in C, so a
scan of 83,000 titles takes about a millisecond instead of 30. Answers are those of ``str.startswith`` /
``str.endswith`` / ``in``: the separator occurs in no value and not in the searched text.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

SEP = "\x00"
MAX_CHARS = 16_000_000  # a column with more text (abstracts) is scanned value by value: no second copy of it


class JoinedText:
    """One column's strings as ``SEP v0 SEP v1 SEP ... SEP`` (other values as empty), with each value's start."""

    def __init__(self, values: list[Any]) -> None:
        texts = [v if type(v) is str else "" for v in values]
        self.text = SEP + SEP.join(texts) + SEP
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        self.starts = np.cumsum(lengths + 1) - lengths  # the first value begins after the leading SEP

    def hits(self, op: str, s: str) -> np.ndarray:
        """Per value: does it start with / end with / contain ``s`` (non-strings: False)."""
        n = len(self.starts)
        out = np.zeros(n, bool)
        needle = SEP + s if op == "STARTS" else s + SEP if op == "ENDS" else s
        starts, find = self.starts, self.text.find
        pos = find(needle, 0) if n else -1
        found = []
        while pos >= 0:
            row = int(np.searchsorted(starts, pos + (op == "STARTS"), "right")) - 1
            found.append(row)
            if row + 1 >= n:
                break
            pos = find(needle, int(starts[row + 1]) - (op == "STARTS"))  # the next value on
        out[found] = True
        return out


def joined(column: Any) -> JoinedText | None:
    """The joined text of a `kg.cypher.columns.Column` (built once, kept in its ``joined_text``), or None when it
    does not apply."""
    cached = getattr(column, "joined_text", False)
    if cached is not False:  # built before: a JoinedText, or None where it does not apply
        return cast("JoinedText | None", cached)
    text: JoinedText | None = None
    values = column.obj.tolist()
    if sum(len(v) for v in values if type(v) is str) <= MAX_CHARS:
        text = JoinedText(values)
        if text.text.count(SEP) != len(values) + 1:  # a value holds the separator
            text = None
    column.joined_text = text
    return text
