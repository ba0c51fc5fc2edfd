"""Build Cypher temporal values: from maps (selecting from other temporals), strings, the clock; truncation."""

from __future__ import annotations

import math
import time as _time
from fractions import Fraction
from typing import Any

from kg.cypher.context import active
from kg.cypher.errors import CypherArgumentError, CypherTypeError
from kg.cypher.temporal import (
    DAY_NS,
    NS,
    Date,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Temporal,
    Time,
    approx_duration,
    at_instant,
    civil_from_days,
    days_from_civil,
    has_date,
    has_time,
    in_zone,
    iso_week,
    week_one,
    weekday,
)
from kg.cypher.temporal_parse import (
    check_date,
    parse_date,
    parse_datetime,
    parse_duration,
    parse_local_datetime,
    parse_local_time,
    parse_time,
    zone_spec,
)
from kg.cypher.values import is_number, type_name

KINDS = ("date", "localtime", "time", "localdatetime", "datetime")
_DATED = ("date", "localdatetime", "datetime")
_TIMED = ("localtime", "time", "localdatetime", "datetime")


def frac(v: Any, what: str) -> Fraction:
    if not is_number(v) or isinstance(v, bool):
        raise CypherTypeError(f"{what} must be a number, got {type_name(v)}")
    if isinstance(v, float) and not math.isfinite(v):  # Fraction() would raise a bare ValueError: a 500
        raise CypherArgumentError(f"{what} must be a finite number, got {v!r}")
    return Fraction(repr(v)) if isinstance(v, float) else Fraction(v)  # repr: 0.1 means one tenth


_DURATION_KEYS = {"years": 12, "quarters": 3, "months": 1, "weeks": 7, "days": 1, "hours": 3600,
                  "minutes": 60, "seconds": 1, "milliseconds": 1_000_000, "microseconds": 1000, "nanoseconds": 1}


def duration_from_map(m: dict[str, Any]) -> Duration:
    parts = [Fraction(0)] * 4  # months, days, seconds, nanos
    for key, v in m.items():
        k = key.lower()
        if k not in _DURATION_KEYS:
            raise CypherArgumentError(f"duration() got an unknown field {key!r} (expected {', '.join(_DURATION_KEYS)})")
        if v is None:
            continue
        slot = 0 if k in ("years", "quarters", "months") else 1 if k in ("weeks", "days") else \
            3 if k in ("milliseconds", "microseconds", "nanoseconds") else 2
        parts[slot] += frac(v, f"duration field {key}") * _DURATION_KEYS[k]
    return approx_duration(*parts)


def to_duration(arg: Any) -> Duration | None:
    if arg is None or isinstance(arg, Duration):
        return arg
    if isinstance(arg, str):
        return parse_duration(arg)
    if isinstance(arg, dict):
        return duration_from_map(arg)
    raise CypherTypeError(f"duration() expects a string or a map, got {type_name(arg)}")


# --- the clock: one instant per query for .statement and .transaction (and the plain forms) ---

def query_now() -> int:
    ctx = active()
    if ctx is None:
        return _time.time_ns()
    if ctx.now_ns is None:
        ctx.now_ns = _time.time_ns()
    return ctx.now_ns


def current(kind: str, tz: Any = None, realtime: bool = False) -> Temporal:
    name, off = zone_spec(tz) if tz is not None else (None, 0)
    return convert(kind, at_instant(_time.time_ns() if realtime else query_now(), name, off))


def convert(kind: str, dt: DateTime) -> Temporal:
    if kind == "date":
        return Date(dt.days)
    if kind == "localtime":
        return LocalTime(dt.nanos)
    if kind == "time":
        return Time(dt.nanos, dt.offset)
    if kind == "localdatetime":
        return LocalDateTime(dt.days, dt.nanos)
    return dt


# --- maps ---

def _int(v: Any, key: str) -> int:
    if type(v) is not int:
        raise CypherTypeError(f"field {key} must be an integer, got {type_name(v)}")
    return v


def _pop(keys: dict[str, Any], *names: str) -> list[int | None]:
    return [None if (v := keys.pop(n, None)) is None else _int(v, n) for n in names]


def resolve_date(keys: dict[str, Any], base: int | None) -> int:
    """Day number from the date fields in ``keys`` (consumed), defaulting to those of ``base``. The fields given
    choose the form: week (week, dayOfWeek), ordinal (ordinalDay), quarter, else calendar (month, day)."""
    year, month, day, week, dow, ordinal, quarter, doq = _pop(
        keys, "year", "month", "day", "week", "dayofweek", "ordinalday", "quarter", "dayofquarter")
    if base is None and year is None:
        raise CypherArgumentError("a date needs a year (or a `date` to start from)")
    by, bm, bd = civil_from_days(base) if base is not None else (0, 1, 1)
    if week is not None or dow is not None and month is None and day is None:
        bwy, bw = iso_week(base) if base is not None else (0, 1)
        y = year if year is not None else bwy
        w = week if week is not None else bw
        wd = dow if dow is not None else (weekday(base) if base is not None else 1)
        if not (1 <= w <= (week_one(y + 1) - week_one(y)) // 7 and 1 <= wd <= 7):
            raise CypherArgumentError(f"invalid week date: year {y}, week {w}, day of week {wd}")
        return week_one(y) + (w - 1) * 7 + wd - 1
    y = year if year is not None else by
    if ordinal is not None:
        if not 1 <= ordinal <= days_from_civil(y + 1, 1, 1) - days_from_civil(y, 1, 1):
            raise CypherArgumentError(f"invalid ordinal day {ordinal} of year {y}")
        return days_from_civil(y, 1, 1) + ordinal - 1
    if quarter is not None or doq is not None:
        base_q = (bm - 1) // 3 + 1
        q = quarter if quarter is not None else base_q
        dq = doq if doq is not None else (base - days_from_civil(by, 3 * base_q - 2, 1) + 1 if base is not None else 1)
        start = days_from_civil(y, 3 * q - 2, 1) if 1 <= q <= 4 else None
        if start is None or not 1 <= dq <= days_from_civil(y + (q == 4), 1 if q == 4 else 3 * q + 1, 1) - start:
            raise CypherArgumentError(f"invalid quarter date: year {y}, quarter {q}, day {dq}")
        return start + dq - 1
    return check_date(y, month if month is not None else bm, day if day is not None else bd)


def resolve_time(keys: dict[str, Any], base: int | None, additive: bool = False) -> int:
    """Nanosecond of the day from the time fields in ``keys`` (consumed), defaulting to ``base``'s. With
    ``additive`` the sub-second fields add to ``base``'s fraction (truncation: 'millisecond' + {nanosecond: 2})."""
    h, mi, s, ms, us, ns = _pop(keys, "hour", "minute", "second", "millisecond", "microsecond", "nanosecond")
    b = base or 0
    bh, bmi, bs, bf = b // (3600 * NS), b // (60 * NS) % 60, b // NS % 60, b % NS
    limits = ((ms, 999), (us, 999 if ms is not None else 999_999),
              (ns, 999 if ms is not None or us is not None else 999_999_999))
    if any(v is not None and not 0 <= v <= top for v, top in limits):
        raise CypherArgumentError("invalid sub-second fields (millisecond < 1000, microsecond and nanosecond "
                                  "within it)")
    sub = None if ms is us is ns is None else (ms or 0) * 1_000_000 + (us or 0) * 1000 + (ns or 0)
    f = (bf + (sub or 0)) if additive else (sub if sub is not None else bf)
    h = h if h is not None else bh
    mi = mi if mi is not None else bmi
    s = s if s is not None else bs
    if not (0 <= h <= 23 and 0 <= mi <= 59 and 0 <= s <= 59 and 0 <= f < NS):
        raise CypherArgumentError(f"invalid time: hour {h}, minute {mi}, second {s}")
    return (h * 3600 + mi * 60 + s) * NS + f


def _zone_of(v: Any) -> tuple[str | None, int] | None:
    if isinstance(v, DateTime):
        return v.zone, v.offset
    if isinstance(v, Time):
        return None, v.offset
    return None


def _source(v: Any, part: str) -> int | None:
    """The day number (``part`` 'date') or nanosecond of the day ('time') of a `date:`/`time:` map value."""
    if v is None:
        return None
    if not (has_date if part == "date" else has_time)(v):
        raise CypherTypeError(f"`{part}` must be a temporal value with a {part}, got {type_name(v)}")
    return v.days if part == "date" else v.nanos


def assemble(kind: str, keys: dict[str, Any], days: int, nanos: int, src_zone: tuple[str | None, int] | None,
             tz: Any, convert_tz: bool) -> Temporal:
    if keys:
        raise CypherArgumentError(f"{kind}() got unknown or inapplicable field(s): {', '.join(sorted(keys))}")
    if kind == "date":
        return Date(days)
    if kind == "localtime":
        return LocalTime(nanos)
    if kind == "localdatetime":
        return LocalDateTime(days, nanos)
    target = zone_spec(tz) if tz is not None else None
    if src_zone is not None:
        dt = in_zone(days, nanos, src_zone[0], src_zone[1], prefer=src_zone[1])
        if target is not None:
            dt = at_instant(dt.epoch_nanos(), *target) if convert_tz else in_zone(days, nanos, *target)
    else:
        dt = in_zone(days, nanos, *(target or (None, 0)))
    return Time(dt.nanos, dt.offset) if kind == "time" else dt


def from_map(kind: str, m: dict[str, Any]) -> Temporal:
    keys = {k.lower(): v for k, v in m.items()}  # a null field counts as absent, but a map of nulls is no clock
    tz = keys.pop("timezone", None)
    if not keys:
        return current(kind, tz)
    whole = keys.pop("datetime", None)
    date_src = keys.pop("date", None) or whole
    time_src = keys.pop("time", None) or whole
    days = resolve_date(keys, _source(date_src, "date")) if kind in _DATED else 0
    nanos = resolve_time(keys, _source(time_src, "time")) if kind in _TIMED else 0
    # a named source zone re-resolves its offset for the new local date-time in `assemble`
    return assemble(kind, keys, days, nanos, _zone_of(time_src), tz, convert_tz=True)


_PARSERS = {"date": lambda s: Date(parse_date(s)), "localtime": parse_local_time, "time": parse_time,
            "localdatetime": parse_local_datetime, "datetime": parse_datetime}


def construct(kind: str, arg: Any) -> Temporal | None:
    """`date(x)` and friends: x a map, a string, another temporal value, or null."""
    if arg is None:
        return None
    if isinstance(arg, str):
        return _PARSERS[kind](arg)
    if isinstance(arg, dict):
        return from_map(kind, arg)
    if isinstance(arg, Temporal) and not isinstance(arg, Duration):
        if has_date(arg) and has_time(arg):
            return from_map(kind, {"datetime": arg})
        if (kind in _DATED) != has_date(arg):
            raise CypherTypeError(f"{kind}() cannot be made from a {type_name(arg)}")
        return from_map(kind, {"date": arg} if has_date(arg) else {"time": arg})
    raise CypherTypeError(f"{kind}() expects a map, a string or a temporal value, got {type_name(arg)}")


# --- truncation ---

_DATE_UNITS = ("millennium", "century", "decade", "year", "weekyear", "quarter", "month", "week", "day")
_TIME_UNITS = {"day": DAY_NS, "hour": 3600 * NS, "minute": 60 * NS, "second": NS, "millisecond": 1_000_000,
               "microsecond": 1000}


def _truncate_days(unit: str, days: int) -> int:
    y, m, _ = civil_from_days(days)
    if unit in ("millennium", "century", "decade", "year"):
        step = {"millennium": 1000, "century": 100, "decade": 10, "year": 1}[unit]
        return days_from_civil(y // step * step, 1, 1)
    if unit == "weekyear":
        return week_one(iso_week(days)[0])
    if unit == "quarter":
        return days_from_civil(y, (m - 1) // 3 * 3 + 1, 1)
    if unit == "month":
        return days_from_civil(y, m, 1)
    if unit == "week":
        return days - weekday(days) + 1
    return days


def truncate(kind: str, unit: Any, value: Any, m: Any = None) -> Temporal | None:
    """`date.truncate('week', x, {dayOfWeek: 2})`: cut x's local fields to ``unit``, then apply the map; a
    `timezone` in the map replaces the zone (it does not convert)."""
    if value is None or unit is None:
        return None
    if not isinstance(unit, str) or unit.lower() not in _DATE_UNITS + tuple(_TIME_UNITS):
        raise CypherArgumentError(f"unknown truncation unit {unit!r} (expected one of millennium, century, decade, "
                                  "year, weekYear, quarter, month, week, day, hour, minute, second, millisecond, "
                                  "microsecond)")
    if not isinstance(value, Temporal) or isinstance(value, Duration):
        raise CypherTypeError(f"{kind}.truncate() expects a temporal value, got {type_name(value)}")
    if m is not None and not isinstance(m, dict):
        raise CypherTypeError(f"{kind}.truncate() expects a map of fields, got {type_name(m)}")
    u = unit.lower()
    keys = {k.lower(): v for k, v in (m or {}).items() if v is not None}
    tz = keys.pop("timezone", None)
    days = nanos = 0
    if kind in _DATED:
        if not has_date(value) or u not in _DATE_UNITS and kind == "date":
            raise CypherArgumentError(f"cannot truncate a {type_name(value)} to a {kind} at unit {unit!r}")
        days = resolve_date(keys, _truncate_days(u, value.days))
    if kind in _TIMED:
        if u in _DATE_UNITS and u != "day" and kind in ("localtime", "time"):
            raise CypherArgumentError(f"cannot truncate a {kind} to unit {unit!r}")
        base = value.nanos if has_time(value) else 0
        step = _TIME_UNITS.get(u, DAY_NS)
        nanos = resolve_time(keys, base // step * step, additive=True)
    return assemble(kind, keys, days, nanos, _zone_of(value), tz, convert_tz=False)
