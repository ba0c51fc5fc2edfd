"""Operations on Cypher temporal values: components, arithmetic, duration.between, the function table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kg.cypher.errors import CypherArgumentError, CypherTypeError
from kg.cypher.temporal import (
    DAY_NS,
    MAX_YEAR,
    MIN_YEAR,
    NS,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    Time,
    add_months,
    approx_duration,
    at_instant,
    civil_from_days,
    days_from_civil,
    duration,
    fmt_offset,
    has_date,
    has_time,
    in_zone,
    iso_week,
    tdiv,
    trem,
    weekday,
)
from kg.cypher.temporal_build import KINDS, construct, current, frac, to_duration, truncate
from kg.cypher.values import is_number, type_name

_MIN_DAY, _MAX_DAY = days_from_civil(MIN_YEAR, 1, 1), days_from_civil(MAX_YEAR, 12, 31)

# --- components (`d.year`, `dur.minutesOfHour`, ...), looked up case-insensitively ---

_DATE_PARTS: dict[str, Callable[[int], int]] = {
    "year": lambda d: civil_from_days(d)[0],
    "quarter": lambda d: (civil_from_days(d)[1] - 1) // 3 + 1,
    "month": lambda d: civil_from_days(d)[1],
    "week": lambda d: iso_week(d)[1],
    "weekyear": lambda d: iso_week(d)[0],
    "day": lambda d: civil_from_days(d)[2],
    "ordinalday": lambda d: d - days_from_civil(civil_from_days(d)[0], 1, 1) + 1,
    "weekday": weekday, "dayofweek": weekday,
    "dayofquarter": lambda d: d - days_from_civil(civil_from_days(d)[0], (civil_from_days(d)[1] - 1) // 3 * 3 + 1,
                                                  1) + 1,
}
_TIME_PARTS: dict[str, Callable[[int], int]] = {
    "hour": lambda n: n // (3600 * NS), "minute": lambda n: n // (60 * NS) % 60, "second": lambda n: n // NS % 60,
    "millisecond": lambda n: n % NS // 1_000_000, "microsecond": lambda n: n % NS // 1000,
    "nanosecond": lambda n: n % NS,
}
_DURATION_PARTS: dict[str, Callable[[Duration], int]] = {
    "years": lambda d: tdiv(d.months, 12), "quarters": lambda d: tdiv(d.months, 3), "months": lambda d: d.months,
    "weeks": lambda d: tdiv(d.days, 7), "days": lambda d: d.days, "hours": lambda d: tdiv(d.seconds, 3600),
    "minutes": lambda d: tdiv(d.seconds, 60), "seconds": lambda d: d.seconds,
    "milliseconds": lambda d: d.seconds * 1000 + d.nanos // 1_000_000,
    "microseconds": lambda d: d.seconds * 1_000_000 + d.nanos // 1000,
    "nanoseconds": lambda d: d.seconds * NS + d.nanos,
    "quartersofyear": lambda d: trem(tdiv(d.months, 3), 4), "monthsofquarter": lambda d: trem(d.months, 3),
    "monthsofyear": lambda d: trem(d.months, 12), "daysofweek": lambda d: trem(d.days, 7),
    "minutesofhour": lambda d: trem(tdiv(d.seconds, 60), 60), "secondsofminute": lambda d: trem(d.seconds, 60),
    "millisecondsofsecond": lambda d: d.nanos // 1_000_000, "microsecondsofsecond": lambda d: d.nanos // 1000,
    "nanosecondsofsecond": lambda d: d.nanos,
}


def component(v: Temporal, key: str) -> Any:
    k = key.lower()
    if isinstance(v, Duration):
        if k in _DURATION_PARTS:
            return _DURATION_PARTS[k](v)
    elif k in _DATE_PARTS and has_date(v):
        return _DATE_PARTS[k](v.days)
    elif k in _TIME_PARTS and has_time(v):
        return _TIME_PARTS[k](v.nanos)
    elif isinstance(v, (Time, DateTime)):
        if k == "timezone":
            return v.zone if isinstance(v, DateTime) and v.zone else fmt_offset(v.offset)
        if k == "offset":
            return fmt_offset(v.offset)
        if k == "offsetminutes":
            return tdiv(v.offset, 60)
        if k == "offsetseconds":
            return v.offset
        if isinstance(v, DateTime) and k in ("epochseconds", "epochmillis"):
            return v.epoch_nanos() // (NS if k == "epochseconds" else 1_000_000)
    raise CypherArgumentError(f"a {type_name(v)} has no component `{key}`")


# --- arithmetic ---

def _neg(d: Duration) -> Duration:
    return duration(-d.months, -d.days, -d.seconds, -d.nanos)


def plus(t: Temporal, d: Duration) -> Temporal:
    """Temporal + duration, refused when the result falls outside the years a date may have (as on Neo4j)."""
    out = _plus(t, d)
    if not _MIN_DAY <= getattr(out, "days", 0) <= _MAX_DAY:
        raise CypherArgumentError(f"{t} + {d} is outside the supported years ({MIN_YEAR:,} to {MAX_YEAR:,})")
    return out


def _plus(t: Temporal, d: Duration) -> Temporal:
    """Months (clamped to the month's end), then days, then the exact time part."""
    shift = d.seconds * NS + d.nanos
    if isinstance(t, Date):
        return Date(add_months(t.days, d.months) + d.days + tdiv(d.seconds, 86_400))
    if isinstance(t, LocalTime):
        return LocalTime((t.nanos + shift) % DAY_NS)
    if isinstance(t, Time):
        return Time((t.nanos + shift) % DAY_NS, t.offset)
    if isinstance(t, LocalDateTime):
        days, nanos = divmod((add_months(t.days, d.months) + d.days) * DAY_NS + t.nanos + shift, DAY_NS)
        return LocalDateTime(days, nanos)
    assert isinstance(t, DateTime)
    moved = in_zone(add_months(t.days, d.months) + d.days, t.nanos, t.zone, t.offset, prefer=t.offset)
    return at_instant(moved.epoch_nanos() + shift, t.zone, t.offset)


def _scale(d: Duration, factor: Any, divide: bool) -> Duration:
    f = frac(factor, "a duration factor")
    if divide:
        if f == 0:
            raise CypherArgumentError("division of a duration by zero")
        f = 1 / f
    return approx_duration(d.months * f, d.days * f, d.seconds * f, d.nanos * f)


def arithmetic(op: str, a: Any, b: Any) -> Any:
    """`+ - * /` where at least one side is temporal (nulls are handled by the caller)."""
    da, db = isinstance(a, Duration), isinstance(b, Duration)
    if op in "+-" and da and db:
        sign = 1 if op == "+" else -1
        return duration(a.months + sign * b.months, a.days + sign * b.days, a.seconds + sign * b.seconds,
                        a.nanos + sign * b.nanos)
    if op in "+-" and db and isinstance(a, Temporal):
        return plus(a, b if op == "+" else _neg(b))
    if op == "+" and da and isinstance(b, Temporal):
        return plus(b, a)
    if op == "*" and (da and is_number(b) or db and is_number(a)):
        return _scale(a if da else b, b if da else a, divide=False)
    if op == "/" and da and is_number(b):
        return _scale(a, b, divide=True)
    hint = " (use duration.between for the time between two values)" if op == "-" else ""
    raise CypherTypeError(f"cannot apply {op} to {type_name(a)} and {type_name(b)}{hint}")


# --- duration.between and friends ---

def _until_end(a: tuple[int, int], b: tuple[int, int]) -> int:
    """b's date, moved a day towards a when b's time of day has not reached a's (java.time's `until`)."""
    end = b[0]
    if end > a[0] and b[1] < a[1]:
        return end - 1
    if end < a[0] and b[1] > a[1]:
        return end + 1
    return end


def _months_until(a: tuple[int, int], b: tuple[int, int]) -> int:
    (ya, ma, da), (yb, mb, db) = civil_from_days(a[0]), civil_from_days(_until_end(a, b))
    return tdiv(((yb * 12 + mb) * 32 + db) - ((ya * 12 + ma) * 32 + da), 32)


def between(a: Any, b: Any, unit: str | None) -> Duration | None:
    """Duration from a to b. A value without a date takes the other's date, one without a time midnight; when
    either has a zone, a local one is read in that zone; months and days count only when both have dates."""
    if a is None or b is None:
        return None
    for v in (a, b):
        if not isinstance(v, Temporal) or isinstance(v, Duration):
            raise CypherTypeError(f"duration.between() expects two temporal values, got {type_name(v)}")
    za = (a.zone if isinstance(a, DateTime) else None, a.offset) if isinstance(a, (Time, DateTime)) else None
    zb = (b.zone if isinstance(b, DateTime) else None, b.offset) if isinstance(b, (Time, DateTime)) else None
    a_days = a.days if has_date(a) else (b.days if has_date(b) else 0)
    b_days = b.days if has_date(b) else a_days
    a_nanos, b_nanos = (v.nanos if has_time(v) else 0 for v in (a, b))
    both_dated = has_date(a) and has_date(b)
    zoned = za or zb
    if zoned:
        first = in_zone(a_days, a_nanos, *(za or zoned), prefer=(za or zoned)[1])
        second = in_zone(b_days, b_nanos, *(zb or zoned), prefer=(zb or zoned)[1])
        second = at_instant(second.epoch_nanos(), first.zone, first.offset)
        start, end = (first.days, first.nanos), (second.days, second.nanos)
    else:
        start, end = (a_days, a_nanos), (b_days, b_nanos)
    months = days = 0
    if both_dated and unit in (None, "months"):
        months = _months_until(start, end)
    if unit == "months":
        return Duration(months, 0, 0, 0)
    cursor = (add_months(start[0], months), start[1])
    if both_dated and unit in (None, "days"):
        days = _until_end(cursor, end) - cursor[0]
    if unit == "days":
        return Duration(0, days, 0, 0)
    cursor = (cursor[0] + days, cursor[1])
    if zoned:
        moved = in_zone(cursor[0], cursor[1], first.zone, first.offset, prefer=first.offset)
        nanos = second.epoch_nanos() - moved.epoch_nanos()
    else:
        nanos = (end[0] - cursor[0]) * DAY_NS + end[1] - cursor[1]
    return duration(months, days, 0, nanos)


# --- the function table, merged into kg.cypher.functions.FUNCTIONS ---

def _fn(op: Callable[..., Any]) -> Callable[[Any, list[Any]], Any]:
    return lambda g, a: op(*a)


def _constructor(kind: str, clock: str | None) -> Callable[..., Any]:
    def op(arg: Any = _NO_ARG) -> Any:
        if arg is _NO_ARG:
            return current(kind, None, realtime=clock == "realtime")
        if clock is not None:  # date.realtime('Europe/Stockholm') or date.statement({timezone: ...})
            if arg is None:
                return None
            tz = arg.get("timezone") if isinstance(arg, dict) else arg
            return current(kind, tz, realtime=clock == "realtime")
        return construct(kind, arg)
    return op


_NO_ARG = object()


def _from_epoch(seconds: Any, nanos: Any) -> Any:
    if seconds is None or nanos is None:
        return None
    if type(seconds) is not int or type(nanos) is not int:
        raise CypherTypeError("datetime.fromepoch() expects integer seconds and nanoseconds")
    return at_instant(seconds * NS + nanos, None, 0)


def _from_epoch_millis(millis: Any) -> Any:
    if millis is None:
        return None
    if type(millis) is not int:
        raise CypherTypeError("datetime.fromepochmillis() expects integer milliseconds")
    return at_instant(millis * 1_000_000, None, 0)


TEMPORAL_FUNCTIONS: dict[str, tuple[Callable[[Any, list[Any]], Any], int, int]] = {
    "duration": (_fn(to_duration), 1, 1),
    "duration.between": (_fn(lambda a, b: between(a, b, None)), 2, 2),
    "duration.inmonths": (_fn(lambda a, b: between(a, b, "months")), 2, 2),
    "duration.indays": (_fn(lambda a, b: between(a, b, "days")), 2, 2),
    "duration.inseconds": (_fn(lambda a, b: between(a, b, "seconds")), 2, 2),
    "datetime.fromepoch": (_fn(_from_epoch), 2, 2),
    "datetime.fromepochmillis": (_fn(_from_epoch_millis), 1, 1),
}
for _kind in KINDS:
    TEMPORAL_FUNCTIONS[_kind] = (_fn(_constructor(_kind, None)), 0, 1)
    for _clock in ("transaction", "statement", "realtime"):
        TEMPORAL_FUNCTIONS[f"{_kind}.{_clock}"] = (_fn(_constructor(_kind, _clock)), 0, 1)
    TEMPORAL_FUNCTIONS[f"{_kind}.truncate"] = (
        _fn(lambda unit, value, m=None, _k=_kind: truncate(_k, unit, value, m)), 2, 3)
