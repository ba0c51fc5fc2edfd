"""Timelines and trends as read models, from a ``TrendIndex`` and a way to describe an entity."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

import numpy as np

from kg.errors import InputError
from kg.graph import ENTITY_LABELS
from kg.models import EntityRef, EntityTimeline, PeriodInfo, TimelinePoint, TrendItem, Trends
from kg.trends import Period, TrendIndex, parse_period, per_month, per_year, share, smoothed_log_ratio

DEFAULT_MIN_COUNT = 5


def timeline(index: TrendIndex, ref: EntityRef) -> EntityTimeline:
    """The entity's papers per year (every year of the store's range) and per month (dated papers)."""
    rows = index.entity_papers(ref.id)
    years, no_year = per_year(index, rows)
    months = per_month(index, rows)
    return EntityTimeline(
        entity=ref, papers=int(len(rows)),
        years=[TimelinePoint(period=str(y), papers=n, total=t, share=share(n, t)) for y, n, t in years],
        months=[TimelinePoint(period=m, papers=n, total=t, share=share(n, t)) for m, n, t in months],
        no_year=no_year, undated=int((~index.dated[rows]).sum()))


def _span_like(p: Period, *, before: bool) -> Period:
    """A period of the same length right before (or after) ``p``."""
    n = p.end - p.start
    lo, hi = (p.start - n, p.start) if before else (p.end, p.end + n)
    if lo < 1 or hi - 1 > date.max.toordinal():
        raise InputError(f"no period as long as {p.label} fits {'before' if before else 'after'} it; "
                         f"give both from= and to=")
    return Period(f"{'before' if before else 'after'} {p.label}", lo, hi)


def choose_periods(index: TrendIndex, before: str | None, after: str | None) -> tuple[Period, Period] | str:
    """Parse ``before``/``after`` (either may be missing: then the span of equal length next to the other),
    or the index's default pair; a reason string when there is nothing to compare."""
    if before is None and after is None:
        return index.default_periods()
    a = parse_period(before) if before is not None else None
    b = parse_period(after) if after is not None else None
    if a is None:
        assert b is not None
        a = _span_like(b, before=True)
    if b is None:
        b = _span_like(a, before=False)
    if b.start < a.end:
        raise InputError(f"the periods overlap or are out of order: from={a.label} must end before to={b.label} starts")
    return a, b


def trends(index: TrendIndex, describe: Callable[[str], EntityRef], labels: Sequence[str], *,
           type: str | None = None, before: str | None = None, after: str | None = None, limit: int = 20,
           min_count: int = DEFAULT_MIN_COUNT) -> Trends:
    """Entities rising, falling and new between two periods; ``labels[j]`` is entity column j's node label."""
    if type is not None and type not in ENTITY_LABELS:
        raise InputError(f"unknown entity type '{type}'; choose from: {', '.join(ENTITY_LABELS)}")
    if min_count < 1:
        raise InputError("min_count must be at least 1")
    bucket, buckets, bucket_of = index.buckets()
    totals = index.series(np.nonzero(index.known)[0], bucket_of, len(buckets))
    chosen = choose_periods(index, before, after)
    empty = Trends(type=type, before=None, after=None, min_count=min_count, bucket=bucket,
                   buckets=buckets, totals=totals, rising=[], falling=[], new=[])
    if isinstance(chosen, str):
        return empty.model_copy(update={"note": f"nothing to compare: {chosen}; pass from= and to="})
    pa, pb = chosen
    n_a, ca = index.period_counts(pa)
    n_b, cb = index.period_counts(pb)
    seen_before = index.counts_before(pb.start)  # papers wholly before the later period
    ok = np.ones(len(index.entities), dtype=bool)
    if type is not None:
        ok = index.of_label(labels, ENTITY_LABELS[type])
    ca, cb = ca.astype(np.int64), cb.astype(np.int64)
    score = smoothed_log_ratio(ca, cb, n_a, n_b)
    ranked = ok & (np.maximum(ca, cb) >= min_count)

    def items(js: np.ndarray) -> list[TrendItem]:
        out = []
        for j in js.tolist():
            eid = index.entities[j]
            rows = index.entity_papers(eid)
            out.append(TrendItem(entity=describe(eid), before=int(ca[j]), after=int(cb[j]),
                                 before_share=share(int(ca[j]), n_a), after_share=share(int(cb[j]), n_b),
                                 score=round(float(score[j]), 6), series=index.series(rows, bucket_of, len(buckets))))
        return out

    ids = index.rank()  # sorting by it is sorting by entity id
    rounded = np.round(score, 6)
    up = np.nonzero(ranked & (rounded > 0))[0]
    up = up[np.lexsort((ids[up], -cb[up], -rounded[up]))][:limit]
    down = np.nonzero(ranked & (rounded < 0))[0]
    down = down[np.lexsort((ids[down], -ca[down], rounded[down]))][:limit]
    fresh = np.nonzero(ok & (seen_before == 0) & (cb >= min_count))[0]
    fresh = fresh[np.lexsort((ids[fresh], -cb[fresh]))][:limit]
    note = ""
    if n_a == 0 or n_b == 0:
        note = f"no papers in {pa.label if n_a == 0 else pb.label}"
    return Trends(type=type, min_count=min_count, bucket=bucket, buckets=buckets,
                  totals=totals, note=note,
                  before=PeriodInfo(label=pa.label, first_day=pa.first_day.isoformat(),
                                    last_day=pa.last_day.isoformat(), papers=n_a),
                  after=PeriodInfo(label=pb.label, first_day=pb.first_day.isoformat(),
                                   last_day=pb.last_day.isoformat(), papers=n_b),
                  rising=items(up), falling=items(down), new=items(fresh))
