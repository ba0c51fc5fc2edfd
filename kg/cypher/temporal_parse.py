"""Parse the ISO 8601 text forms Cypher accepts for temporal values, durations and time zones."""

from __future__ import annotations

import re
from fractions import Fraction

from kg.cypher.errors import CypherArgumentError, CypherTypeError
from kg.cypher.temporal import (
    MAX_YEAR,
    NS,
    DateTime,
    Duration,
    LocalDateTime,
    LocalTime,
    Time,
    approx_duration,
    days_from_civil,
    in_zone,
    month_len,
    week_one,
    zone,
)

_YEAR = r"(?P<year>[+-]\d{4,9}|\d{4})"
_DATE = re.compile(
    _YEAR + r"(?:"
    r"-(?P<m1>\d{2})-(?P<d1>\d{2})|(?P<m2>\d{2})(?P<d2>\d{2})"  # calendar
    r"|-?W(?P<w>\d{2})(?:-?(?P<wd>\d))?"  # week date
    r"|-?(?P<o>\d{3})"  # ordinal date
    r"|-?(?P<m3>\d{2})"  # year and month
    r")?"
)
_FRAC = r"(?:[.,](?P<frac>\d{1,9}))?"
_TIME = re.compile(
    r"(?P<h>\d{2})(?:(?P<sep>:?)(?P<mi>\d{2})(?:(?P=sep)(?P<s>\d{2})" + _FRAC + r")?)?"
    r"(?P<tz>Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?(?:\[(?P<zone>[^\]]+)\])?"
)
_OFFSET = re.compile(r"(?P<sign>[+-])(?P<h>\d{2})(?::?(?P<m>\d{2})(?::?(?P<s>\d{2}))?)?")
_NUM = r"[+-]?\d+(?:[.,]\d+)?"
_DURATION = re.compile(
    rf"(?P<neg>-)?P(?:(?P<Y>{_NUM})Y)?(?:(?P<M>{_NUM})M)?(?:(?P<W>{_NUM})W)?(?:(?P<D>{_NUM})D)?"
    rf"(?:T(?:(?P<h>{_NUM})H)?(?:(?P<mi>{_NUM})M)?(?:(?P<s>{_NUM})S)?)?",
    re.IGNORECASE,
)
_DURATION_ALT = re.compile(r"(?P<neg>-)?P(?P<Y>\d{4})-(?P<M>\d{2})-(?P<D>\d{2})T(?P<h>\d{2}):(?P<mi>\d{2}):"
                           r"(?P<s>\d{2}(?:[.,]\d{1,9})?)")


_EXAMPLES = {"date": "2015-07-21", "local time": "21:40:32.142", "time": "21:40:32.142+01:00",
             "local datetime": "2015-07-21T21:40:32.142", "duration": "P1Y2M10DT2H30M"}


def bad(kind: str, text: str) -> CypherArgumentError:
    # an example of the kind asked for (a duration is not '2015-07-21T...'); long input is shortened, not echoed
    shown = repr(text) if len(text) <= 60 else repr(text[:50]) + f"... ({len(text):,} characters)"
    example = _EXAMPLES.get(kind, "2015-07-21T21:40:32.142+01:00")
    return CypherArgumentError(f"cannot parse {shown} as a {kind} (expected ISO 8601, e.g. '{example}')")


def check_date(y: int, m: int, d: int, what: str = "date") -> int:
    if not (-MAX_YEAR <= y <= MAX_YEAR and 1 <= m <= 12 and 1 <= d <= month_len(y, m)):
        raise CypherArgumentError(f"invalid {what}: year {y}, month {m}, day {d}")
    return days_from_civil(y, m, d)


def parse_date(text: str) -> int:
    """Day number of a date string: calendar, week (2015-W30-2), ordinal (2015-202), year-month or year."""
    m = _DATE.fullmatch(text.strip())
    if m is None:
        raise bad("date", text)
    y = int(m["year"])
    if m["w"]:
        week, wd = int(m["w"]), int(m["wd"] or 1)
        if not (1 <= week <= 53 and 1 <= wd <= 7):
            raise bad("date", text)
        return week_one(y) + (week - 1) * 7 + wd - 1
    if m["o"]:
        ordinal = int(m["o"])
        if not 1 <= ordinal <= (366 if month_len(y, 2) == 29 else 365):
            raise bad("date", text)
        return days_from_civil(y, 1, 1) + ordinal - 1
    month = int(m["m1"] or m["m2"] or m["m3"] or 1)
    return check_date(y, month, int(m["d1"] or m["d2"] or 1))


def parse_offset(text: str) -> int | None:
    """Seconds east of UTC for 'Z', '+01', '+0100', '+01:00', '-02:05:07'; None if ``text`` is not an offset."""
    if text in ("Z", "z"):
        return 0
    m = _OFFSET.fullmatch(text)
    if m is None:
        return None
    secs = int(m["h"]) * 3600 + int(m["m"] or 0) * 60 + int(m["s"] or 0)
    if secs > 18 * 3600:
        raise CypherArgumentError(f"time zone offset {text!r} is out of range (at most 18 hours)")
    return secs if m["sign"] == "+" else -secs


def zone_spec(text: str) -> tuple[str | None, int]:
    """(zone name or None, fixed offset) for a `timezone` value."""
    if not isinstance(text, str):
        raise CypherTypeError(f"timezone must be a string, got {type(text).__name__}")
    off = parse_offset(text.strip())
    if off is not None:
        return None, off
    zone(text.strip())  # fail now on an unknown name
    return text.strip(), 0


def _time_parts(text: str, kind: str) -> tuple[int, str | None, str | None]:
    m = _TIME.fullmatch(text.strip())
    if m is None:
        raise bad(kind, text)
    h, mi, s = int(m["h"]), int(m["mi"] or 0), int(m["s"] or 0)
    if h > 23 or mi > 59 or s > 59:
        raise bad(kind, text)
    frac = int((m["frac"] or "").ljust(9, "0") or 0)
    return (h * 3600 + mi * 60 + s) * NS + frac, m["tz"], m["zone"]


def parse_local_time(text: str) -> LocalTime:
    return LocalTime(_time_parts(text, "local time")[0])


def parse_time(text: str, default_offset: int = 0) -> Time:
    nanos, tz, name = _time_parts(text, "time")
    off = parse_offset(tz) if tz else default_offset
    return Time(nanos, off if off is not None else default_offset)


def _split(text: str, kind: str) -> tuple[int, str]:
    date, sep, time = text.strip().partition("T")
    if not sep:
        return parse_date(date), "00:00"
    if not time:
        raise bad(kind, text)
    return parse_date(date), time


def parse_local_datetime(text: str) -> LocalDateTime:
    days, time = _split(text, "local date time")
    return LocalDateTime(days, _time_parts(time, "local date time")[0])


def parse_datetime(text: str, default: tuple[str | None, int] = (None, 0)) -> DateTime:
    days, time = _split(text, "date time")
    nanos, tz, name = _time_parts(time, "date time")
    off = parse_offset(tz) if tz else None
    if name:
        zone(name)
        return in_zone(days, nanos, name, prefer=off)
    if off is not None:
        return DateTime(days, nanos, off)
    return in_zone(days, nanos, default[0], default[1])


def _num(text: str | None) -> Fraction:
    if text and len(text) > 40:  # past 64 bits anyway; thousands of digits would hit Python's int-parsing cap
        raise CypherArgumentError(f"duration out of range: {text[:20]}... has more than 40 digits")
    return Fraction(text.replace(",", ".")) if text else Fraction(0)


def parse_duration(text: str) -> Duration:
    """P[nY][nM][nW][nD][T[nH][nM][nS]] with signed, fractional parts, or PYYYY-MM-DDThh:mm:ss."""
    s = text.strip()
    m = _DURATION.fullmatch(s) or _DURATION_ALT.fullmatch(s)
    if m is None or s.upper() in ("P", "-P") or s.upper().endswith("T"):
        raise bad("duration", text)
    g = m.groupdict()
    months = _num(g["Y"]) * 12 + _num(g["M"])
    days = _num(g.get("W")) * 7 + _num(g["D"])
    seconds = _num(g["h"]) * 3600 + _num(g["mi"]) * 60 + _num(g["s"])
    sign = -1 if g["neg"] else 1
    return approx_duration(sign * months, sign * days, sign * seconds, Fraction(0))
