"""Entity trends over time: papers per year and month, and the entities rising, falling or new between periods.

Every paper covers a span of days: its ``published`` day when it has one, else the whole of its ``year``, else
nothing (it is left out of every count). A period is a span of days too (``2025``, ``2025-H2``, ``2025-Q3``,
``2025-07``, ``2025-07-14`` or ``A..B``), and a paper counts in a period when its span lies inside it, so a
paper known only by its year counts in ``2025`` but in no month of it.

Two periods are compared on each entity's share of the period's papers. The score is the log ratio of the
shares with one paper added to each count (``ln(((b + 1) / N_b) / ((a + 1) / N_a))``), and an entity needs at
least ``min_count`` papers in one of the periods to be ranked at all: without both, an entity seen once
would top every list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

import numpy as np

from kg.errors import InputError
from kg.lru import LRUCache

_PERIOD = re.compile(r"(\d{4})(?:-(?:(H[12])|(Q[1-4])|(\d{1,2})(?:-(\d{1,2}))?))?", re.IGNORECASE)
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
NO_DAY = -1


@dataclass(frozen=True, slots=True)
class Period:
    """Days ``start`` (inclusive) to ``end`` (exclusive), as ``date.toordinal()`` numbers, and how to show it."""

    label: str
    start: int
    end: int

    @property
    def first_day(self) -> date:
        return date.fromordinal(self.start)

    @property
    def last_day(self) -> date:
        return date.fromordinal(self.end - 1)


def _one(text: str) -> Period:
    m = _PERIOD.fullmatch(text.strip())
    if not m:
        raise InputError(f"not a period: '{text}' (use 2025, 2025-H2, 2025-Q3, 2025-07, 2025-07-14 or A..B)")
    year, half, quarter, month, day = m.groups()
    y = int(year)
    try:
        if half:
            h = int(half[1])
            lo, hi = date(y, 6 * h - 5, 1), (date(y, 7, 1) if h == 1 else date(y + 1, 1, 1))
            return Period(f"{y}-H{h}", lo.toordinal(), hi.toordinal())
        if quarter:
            q = int(quarter[1])
            lo = date(y, 3 * q - 2, 1)
            hi = date(y + 1, 1, 1) if q == 4 else date(y, 3 * q + 1, 1)
            return Period(f"{y}-Q{q}", lo.toordinal(), hi.toordinal())
        if month and day:
            d = date(y, int(month), int(day))
            return Period(d.isoformat(), d.toordinal(), d.toordinal() + 1)
        if month:
            mo = int(month)
            lo = date(y, mo, 1)
            hi = date(y + 1, 1, 1) if mo == 12 else date(y, mo + 1, 1)
            return Period(f"{y}-{mo:02d}", lo.toordinal(), hi.toordinal())
        return Period(str(y), date(y, 1, 1).toordinal(), date(y + 1, 1, 1).toordinal())
    except ValueError:  # month 13, 30 February, year 0
        raise InputError(f"not a date: '{text}'") from None


def parse_period(text: str) -> Period:
    """``2025``, ``2025-H1``, ``2025-Q3``, ``2025-07``, ``2025-07-14``, or ``A..B`` (from A's start to B's end)."""
    if ".." in text:
        a, _, b = text.partition("..")
        lo, hi = _one(a), _one(b)
        if hi.end <= lo.start:
            raise InputError(f"period '{text}' ends before it starts")
        return Period(f"{lo.label}..{hi.label}", lo.start, hi.end)
    return _one(text)


def day_range_label(start: int, end: int) -> str:
    return f"{date.fromordinal(start).isoformat()}..{date.fromordinal(end - 1).isoformat()}"


def published_day(value: Any) -> int:
    """A ``published`` property as a day number: a Python date or datetime, a neo4j driver date, kg's Cypher
    ``Date`` (a loaded store's graph holds those), or an ISO string, maybe with a time."""
    if isinstance(value, datetime):
        return value.date().toordinal()
    if isinstance(value, date):
        return value.toordinal()
    if hasattr(value, "to_native"):  # neo4j.time.Date / DateTime
        return published_day(value.to_native())
    if value is not None and not isinstance(value, str | int | float | bool):
        value = str(value)  # kg.cypher.temporal values print as ISO text
    if isinstance(value, str):
        m = _ISO_DAY.match(value.strip())
        if m:
            try:
                return date(int(m[1]), int(m[2]), int(m[3])).toordinal()
            except ValueError:
                return NO_DAY
    return NO_DAY


def paper_span(year: Any, published: Any) -> tuple[int, int]:
    """The days a paper covers: its published day, else its whole year, else (NO_DAY, NO_DAY)."""
    day = published_day(published) if published is not None else NO_DAY
    if day != NO_DAY:
        return day, day + 1
    if isinstance(year, int) and not isinstance(year, bool) and 1 <= year <= 9998:
        return date(year, 1, 1).toordinal(), date(year + 1, 1, 1).toordinal()
    return NO_DAY, NO_DAY


def _month_index(day: int) -> int:
    d = date.fromordinal(day)
    return d.year * 12 + d.month - 1


def _month_label(i: int) -> str:
    return f"{i // 12}-{i % 12 + 1:02d}"


class TrendIndex:
    """Papers' spans and the paper-entity incidence as arrays, for counting any period in one pass.

    ``papers`` and ``entities`` are the rows and columns of the incidence matrix in CSR form (``indptr``,
    ``indices``), as ``kg.related.RelatedIndex`` holds it; ``spans`` are aligned with ``papers``.
    """

    def __init__(self, papers: Sequence[str], entities: Sequence[str], indptr: np.ndarray, indices: np.ndarray,
                 spans: Sequence[tuple[int, int]], dated: Sequence[bool]) -> None:
        self.papers, self.entities = list(papers), list(entities)
        self.col = {e: j for j, e in enumerate(self.entities)}
        self.indptr, self.indices = np.asarray(indptr, dtype=np.int64), np.asarray(indices)
        span = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        self.lo, self.hi = span[:, 0], span[:, 1]
        self.known = self.lo != NO_DAY
        self.dated = np.asarray(dated, dtype=bool) & self.known
        counts = np.diff(indptr)
        self.inc_paper = np.repeat(np.arange(len(self.papers), dtype=np.int64), counts)
        self.inc_entity = np.asarray(indices, dtype=np.int64)
        order = np.argsort(self.inc_entity, kind="stable")
        self.by_entity = self.inc_paper[order]  # each entity's papers, ascending, entity after entity
        self.entity_ptr = np.zeros(len(self.entities) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.inc_entity, minlength=len(self.entities)), out=self.entity_ptr[1:])
        years = np.zeros(len(self.papers), dtype=np.int64)
        if self.known.any():
            years[self.known] = [date.fromordinal(int(d)).year for d in self.lo[self.known]]
        self.year = years  # 0 = unknown
        self.month = np.full(len(self.papers), -1, dtype=np.int64)
        if self.dated.any():
            self.month[self.dated] = [_month_index(int(d)) for d in self.lo[self.dated]]
        # Counts per period, asked again and again for the default pair: kept for a few periods (int32, so 16 of
        # them take 26 MB at 400k entities).
        self._counts = LRUCache(16 * max(1, len(self.entities)))
        self._rank: np.ndarray | None = None
        self._of_label: dict[tuple[int, str], tuple[Sequence[str], np.ndarray]] = {}

    @classmethod
    def from_csr(cls, papers: Sequence[str], entities: Sequence[str], indptr: np.ndarray, indices: np.ndarray,
                 nodes: Mapping[str, Mapping[str, Any]]) -> TrendIndex:
        spans, dated = [], []
        for p in papers:
            d = nodes[p]
            s = paper_span(d.get("year"), d.get("published"))
            spans.append(s)
            dated.append(s[0] != NO_DAY and s[1] - s[0] == 1)
        return cls(papers, entities, indptr, indices, spans, dated)

    # -- periods ------------------------------------------------------------------------------------------
    def in_period(self, p: Period) -> np.ndarray:
        return self.known & (self.lo >= p.start) & (self.hi <= p.end)

    def default_periods(self) -> tuple[Period, Period] | str:
        """The last full calendar year against the one before, else the two halves of the dated range; a
        reason instead when neither exists."""
        if not self.known.any():
            return "no paper has a year or a date"
        lo, hi = int(self.lo[self.known].min()), int(self.hi[self.known].max())
        first, last = date.fromordinal(lo), date.fromordinal(hi - 1)
        # A year is full when the papers' days reach from its first day to its last (a year-only paper
        # covers its whole year).
        full = [y for y in range(first.year, last.year + 1)
                if lo <= date(y, 1, 1).toordinal() and date(y + 1, 1, 1).toordinal() <= hi]
        if len(full) >= 2 and full[-1] - 1 == full[-2]:
            return parse_period(str(full[-2])), parse_period(str(full[-1]))
        if self.dated.any():
            dlo, dhi = int(self.lo[self.dated].min()), int(self.hi[self.dated].max())
            if dhi - dlo >= 2:
                mid = dlo + (dhi - dlo) // 2
                return (Period(day_range_label(dlo, mid), dlo, mid), Period(day_range_label(mid, dhi), mid, dhi))
        years = sorted({int(y) for y in self.year[self.known]})
        return (f"the papers span one year ({years[0]}) and have no published dates" if len(years) == 1
                else "the papers' dates do not cover two periods")

    # -- counts -------------------------------------------------------------------------------------------
    def counts(self, mask: np.ndarray) -> np.ndarray:
        """Papers per entity among the papers where ``mask`` holds."""
        return np.bincount(self.inc_entity[mask[self.inc_paper]], minlength=len(self.entities))

    def period_counts(self, p: Period) -> tuple[int, np.ndarray]:
        """The papers in ``p`` and each entity's papers among them (``counts(in_period(p))``), remembered."""
        return self._remember(("in", p.start, p.end), lambda: self.in_period(p))

    def counts_before(self, day: int) -> np.ndarray:
        """Each entity's papers wholly before ``day``, remembered."""
        return self._remember(("before", day), lambda: self.known & (self.hi <= day))[1]

    def _remember(self, key: tuple[Any, ...], mask_of: Callable[[], np.ndarray]) -> tuple[int, np.ndarray]:
        hit = self._counts.get(key)
        if hit is None:
            mask = mask_of()
            counts = self.counts(mask).astype(np.int32)
            counts.flags.writeable = False  # shared by every caller
            hit = self._counts.put(key, (int(mask.sum()), counts), len(counts))
        return hit

    def rank(self) -> np.ndarray:
        """Each entity's position in id order: sorting by it sorts by id, without comparing strings."""
        if self._rank is None:
            order = np.argsort(np.asarray(self.entities, dtype=object), kind="stable")
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            self._rank = rank
        return self._rank

    def of_label(self, labels: Sequence[str], label: str) -> np.ndarray:
        """Whether each entity's label (``labels[j]`` for column j) is ``label``, remembered per labels list."""
        key = (id(labels), label)
        hit = self._of_label.get(key)
        if hit is None:  # the list is kept with its mask, so its id cannot pass to another list
            mask = np.fromiter((lab == label for lab in labels), dtype=bool, count=len(labels))
            hit = self._of_label[key] = (labels, mask)
        return hit[1]

    def entity_papers(self, entity_id: str) -> np.ndarray:
        j = self.col.get(entity_id)
        if j is None:
            return np.zeros(0, dtype=np.int64)
        return self.by_entity[self.entity_ptr[j] : self.entity_ptr[j + 1]]

    def buckets(self) -> tuple[Literal["year", "month"], list[str], np.ndarray]:
        """The store's timeline axis: months when papers have dates, else years; and each row's bucket."""
        if self.dated.any():
            ms = self.month[self.dated]
            lo, hi = int(ms.min()), int(ms.max())
            return "month", [_month_label(i) for i in range(lo, hi + 1)], np.where(self.dated, self.month - lo, -1)
        if self.known.any():
            ys = self.year[self.known]
            lo, hi = int(ys.min()), int(ys.max())
            return "year", [str(y) for y in range(lo, hi + 1)], np.where(self.known, self.year - lo, -1)
        return "year", [], np.full(len(self.papers), -1)

    def series(self, rows: np.ndarray, bucket_of: np.ndarray, n: int) -> list[int]:
        b = bucket_of[rows]
        return np.bincount(b[b >= 0], minlength=n).tolist() if n else []


def per_year(index: TrendIndex, rows: np.ndarray) -> tuple[list[tuple[int, int, int]], int]:
    """(year, the entity's papers, all papers) for every year of the store's range, and papers with no year."""
    ys = index.year[index.known]
    if not len(ys):
        return [], int(len(rows))
    lo, hi = int(ys.min()), int(ys.max())
    total = np.bincount(ys - lo, minlength=hi - lo + 1)
    mine = index.year[rows]
    counted = np.bincount(mine[mine > 0] - lo, minlength=hi - lo + 1)
    return ([(lo + i, int(counted[i]), int(total[i])) for i in range(hi - lo + 1)], int((mine == 0).sum()))


def per_month(index: TrendIndex, rows: np.ndarray) -> list[tuple[str, int, int]]:
    """(month, the entity's dated papers, all dated papers) for every month of the dated range."""
    if not index.dated.any():
        return []
    ms = index.month[index.dated]
    lo, hi = int(ms.min()), int(ms.max())
    total = np.bincount(ms - lo, minlength=hi - lo + 1)
    mine = index.month[rows]
    counted = np.bincount(mine[mine >= 0] - lo, minlength=hi - lo + 1)
    return [(_month_label(lo + i), int(counted[i]), int(total[i])) for i in range(hi - lo + 1)]


def smoothed_log_ratio(a: np.ndarray, b: np.ndarray, n_a: int, n_b: int) -> np.ndarray:
    """ln of the after/before share ratio, one paper added to each count (so 0 -> 1 is not infinite)."""
    return np.log((b + 1.0) / max(1, n_b)) - np.log((a + 1.0) / max(1, n_a))


def share(count: int, total: int) -> float:
    return round(count / total, 6) if total else 0.0


def round_score(x: float) -> float:
    return 0.0 if math.isnan(x) else round(x, 6)
