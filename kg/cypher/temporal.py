"""Cypher temporal values (date, localtime, time, localdatetime, datetime, duration): calendar, text, order."""

from __future__ import annotations

import datetime as _dt
import importlib.resources
import zoneinfo
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import trunc
from typing import TYPE_CHECKING, Any

from kg.cypher.errors import CypherArgumentError

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing.TypeIs is Python 3.13's

NS = 1_000_000_000
DAY_NS = 86_400 * NS
AVG_MONTH_S = 2_629_746  # the Gregorian average month (365.2425 / 12 days), as Neo4j and java.time use
MIN_YEAR, MAX_YEAR = -999_999_999, 999_999_999


# --- proleptic Gregorian calendar on day numbers (0 = 1970-01-01), valid for any year ---

def days_from_civil(y: int, m: int, d: int) -> int:
    """Day number of y-m-d (H. Hinnant's algorithm, exact for every year, negative ones included)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def month_len(y: int, m: int) -> int:
    return 29 if m == 2 and is_leap(y) else (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]


def weekday(days: int) -> int:
    """ISO day of week, Monday = 1 ... Sunday = 7 (1970-01-01 was a Thursday)."""
    return (days + 3) % 7 + 1


def week_one(week_year: int) -> int:
    """Day number of the Monday that starts ISO week 1 of ``week_year`` (the week holding 4 January)."""
    jan4 = days_from_civil(week_year, 1, 4)
    return jan4 - weekday(jan4) + 1


def iso_week(days: int) -> tuple[int, int]:
    """(week-based year, week number) of a day."""
    thursday = days - weekday(days) + 4
    wy = civil_from_days(thursday)[0]
    return wy, (thursday - days_from_civil(wy, 1, 1)) // 7 + 1


def add_months(days: int, months: int) -> int:
    """Shift a date by whole months, clamping the day to the end of a shorter month (Jan 31 + 1 month = Feb 28)."""
    y, m, d = civil_from_days(days)
    ny, nm0 = divmod(y * 12 + m - 1 + months, 12)
    return days_from_civil(ny, nm0 + 1, min(d, month_len(ny, nm0 + 1)))


def tdiv(a: int, b: int) -> int:
    """Integer division truncating towards zero, as Java's (duration components carry the sign of the whole)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def trem(a: int, b: int) -> int:
    return a - b * tdiv(a, b)


# --- values: immutable, equal when all fields are (java.time's equals), hashable for DISTINCT / grouping ---

class Temporal:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Date(Temporal):
    days: int

    def __str__(self) -> str:
        return fmt_date(self.days)


@dataclass(frozen=True, slots=True)
class LocalTime(Temporal):
    nanos: int  # of the day

    def __str__(self) -> str:
        return fmt_time(self.nanos)


@dataclass(frozen=True, slots=True)
class Time(Temporal):
    nanos: int
    offset: int  # seconds east of UTC

    def __str__(self) -> str:
        return fmt_time(self.nanos) + fmt_offset(self.offset)


@dataclass(frozen=True, slots=True)
class LocalDateTime(Temporal):
    days: int
    nanos: int

    def __str__(self) -> str:
        return f"{fmt_date(self.days)}T{fmt_time(self.nanos)}"


@dataclass(frozen=True, slots=True)
class DateTime(Temporal):
    days: int  # local date and time in the zone
    nanos: int
    offset: int
    zone: str | None = None  # a named zone (IANA id); None for a fixed offset

    def __str__(self) -> str:
        zone = f"[{self.zone}]" if self.zone else ""
        return f"{fmt_date(self.days)}T{fmt_time(self.nanos)}{fmt_offset(self.offset)}{zone}"

    def epoch_nanos(self) -> int:
        return self.days * DAY_NS + self.nanos - self.offset * NS


@dataclass(frozen=True, slots=True)
class Duration(Temporal):
    months: int
    days: int
    seconds: int
    nanos: int  # 0 <= nanos < 1e9 after `duration()` normalises it

    def __str__(self) -> str:
        return fmt_duration(self)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def duration(months: int, days: int, seconds: int, nanos: int) -> Duration:
    extra, nanos = divmod(nanos, NS)
    seconds += extra
    # 64 bits each, as Neo4j; unbounded, `d * 1e300` in a loop passed Python's 4,300-digit printing cap (a 500)
    if not all(INT64_MIN <= v <= INT64_MAX for v in (months, days, seconds)):
        raise CypherArgumentError("duration out of range: its months, days and seconds must each fit in 64 bits")
    return Duration(months, days, seconds, nanos)


def approx_duration(months: Fraction, days: Fraction, seconds: Fraction, nanos: Fraction) -> Duration:
    """A duration from fractional parts: a fraction of a month becomes days and seconds (an average month),
    a fraction of a day becomes seconds, as Neo4j does. Exact arithmetic, so 'P0.75M' is exactly PT...49.5S."""
    m = trunc(months)
    days += (months - m) * AVG_MONTH_S / 86_400
    d = trunc(days)
    seconds += (days - d) * 86_400
    s = trunc(seconds)
    return duration(m, d, s, trunc(nanos + (seconds - s) * NS))


def has_date(v: Any) -> TypeIs[Date | LocalDateTime | DateTime]:
    return isinstance(v, (Date, LocalDateTime, DateTime))


def has_time(v: Any) -> TypeIs[LocalTime | Time | LocalDateTime | DateTime]:
    return isinstance(v, (LocalTime, Time, LocalDateTime, DateTime))


# --- text forms, exactly as Neo4j prints them ---

def fmt_date(days: int) -> str:
    y, m, d = civil_from_days(days)
    year = f"{y:04d}" if 0 <= y <= 9999 else (f"+{y}" if y > 0 else f"-{-y:04d}")
    return f"{year}-{m:02d}-{d:02d}"


def fmt_time(nanos: int) -> str:
    secs, frac = divmod(nanos, NS)
    h, rest = divmod(secs, 3600)
    mi, s = divmod(rest, 60)
    out = f"{h:02d}:{mi:02d}"
    if s or frac:
        out += f":{s:02d}"
    if frac:  # java.time prints 3, 6 or 9 digits
        digits = f"{frac:09d}"
        out += "." + (digits[:3] if frac % 1_000_000 == 0 else digits[:6] if frac % 1000 == 0 else digits)
    return out


def fmt_offset(offset: int) -> str:
    if offset == 0:
        return "Z"
    sign = "+" if offset > 0 else "-"
    h, rest = divmod(abs(offset), 3600)
    mi, s = divmod(rest, 60)
    return f"{sign}{h:02d}:{mi:02d}" + (f":{s:02d}" if s else "")


def fmt_duration(d: Duration) -> str:
    out = "P"
    for value, unit in ((tdiv(d.months, 12), "Y"), (trem(d.months, 12), "M"), (d.days, "D")):
        if value:
            out += f"{value}{unit}"
    total = d.seconds * NS + d.nanos
    sign = "-" if total < 0 else ""
    h, rest = divmod(abs(total), 3600 * NS)
    mi, rest = divmod(rest, 60 * NS)
    s, frac = divmod(rest, NS)
    time = (f"{sign}{h}H" if h else "") + (f"{sign}{mi}M" if mi else "")
    if s or frac:
        time += f"{sign}{s}" + (f".{frac:09d}".rstrip("0") if frac else "") + "S"
    if time:
        out += "T" + time
    return out if out != "P" else "PT0S"


# --- time zones ---

@lru_cache(maxsize=512)
def zone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA zone ``name``. The `tzdata` package is preferred over the system's files so that results match
    the TCK (and Neo4j's java.time) everywhere, e.g. Europe/Stockholm before 1900 (mainline tzdata, no backzone)."""
    try:
        with importlib.resources.files("tzdata.zoneinfo").joinpath(*name.split("/")).open("rb") as f:
            return zoneinfo.ZoneInfo.from_file(f, key=name)
    except (ModuleNotFoundError, FileNotFoundError, IsADirectoryError, ValueError, OSError):
        pass
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise CypherArgumentError(f"unknown time zone {name!r} (expected an offset like '+01:00' or a name like "
                          "'Europe/Stockholm')") from None


def _py_local(days: int, nanos: int) -> _dt.datetime:
    # python's datetime covers years 1..9999; outside it the zone rules at the edge apply (as good as any guess)
    days = min(max(days, days_from_civil(1, 1, 2)), days_from_civil(9999, 12, 30))
    y, m, d = civil_from_days(days)
    secs = nanos // NS
    return _dt.datetime(y, m, d, secs // 3600, secs // 60 % 60, secs % 60)


def offset_at_instant(name: str, epoch_nanos: int) -> int:
    days, rest = divmod(epoch_nanos, DAY_NS)
    utc = _py_local(days, rest).replace(tzinfo=_dt.UTC)
    off = utc.astimezone(zone(name)).utcoffset()
    return int(off.total_seconds()) if off is not None else 0


def in_zone(days: int, nanos: int, name: str | None, offset: int = 0, prefer: int | None = None) -> DateTime:
    """A DateTime for a local date-time in a named zone (or at a fixed ``offset`` when ``name`` is None).
    An ambiguous local time takes the earlier offset (or ``prefer`` where it is valid); one in a gap moves
    forward by the gap's length, as java.time does."""
    if name is None:
        return DateTime(days, nanos, offset)
    local = _py_local(days, nanos).replace(tzinfo=zone(name))
    first = local.utcoffset()
    assert first is not None  # a datetime with a ZoneInfo always has an offset
    offs = {int(o.total_seconds()) for o in (first, local.replace(fold=1).utcoffset()) if o is not None}
    off = prefer if prefer in offs else int(first.total_seconds())
    instant = days * DAY_NS + nanos - off * NS
    return at_instant(instant, name)


def at_instant(epoch_nanos: int, name: str | None, offset: int = 0) -> DateTime:
    """The DateTime showing instant ``epoch_nanos`` in a named zone or at a fixed offset."""
    off = offset_at_instant(name, epoch_nanos) if name is not None else offset
    days, nanos = divmod(epoch_nanos + off * NS, DAY_NS)
    return DateTime(days, nanos, off, name)


# --- order: same-type comparison for < and friends, a total order for ORDER BY ---

_RANK = {DateTime: 0, LocalDateTime: 1, Date: 2, Time: 3, LocalTime: 4, Duration: 5}


def _time_key(v: Time) -> tuple[int, int]:
    return (v.nanos - v.offset * NS, v.offset)


def order_key(v: Temporal) -> tuple[Any, ...]:
    if isinstance(v, Date):
        return (v.days,)
    if isinstance(v, LocalTime):
        return (v.nanos,)
    if isinstance(v, Time):
        return _time_key(v)
    if isinstance(v, LocalDateTime):
        return (v.days, v.nanos)
    if isinstance(v, DateTime):
        return (v.epoch_nanos(), v.days, v.nanos, v.zone or "")
    assert isinstance(v, Duration)
    return (v.months * AVG_MONTH_S + v.days * 86_400 + v.seconds, v.nanos, v.months, v.days)


def compare(a: Temporal, b: Temporal) -> int | None:
    """-1/0/1 for two temporals of one kind; None (so `<` gives null) across kinds and for durations."""
    if type(a) is not type(b) or isinstance(a, Duration):
        return None
    ka, kb = order_key(a), order_key(b)
    return (ka > kb) - (ka < kb)


def sort_key(v: Temporal) -> tuple[Any, ...]:
    """Position among temporals for ORDER BY: datetime < localdatetime < date < time < localtime < duration."""
    return (_RANK[type(v)], order_key(v))
