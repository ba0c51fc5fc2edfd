"""Temporal values in kg's Cypher engine: what a user writes and gets back (the TCK covers the long tail)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from kg.cypher import CypherError, run_query


def one(query: str, params: dict[str, Any] | None = None) -> list[Any]:
    rows = run_query(nx.MultiDiGraph(), query, params).rows
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize(("expr", "text"), [
    ("date('2015-W30-2')", "2015-07-21"),
    ("date('2015202')", "2015-07-21"),
    ("date({year: 1984, quarter: 3, dayOfQuarter: 45})", "1984-08-14"),
    ("localtime('214032.142')", "21:40:32.142"),
    ("time('2140-02')", "21:40-02:00"),
    ("localdatetime('2015-W30T2140')", "2015-07-20T21:40"),
    ("datetime('2015-07-21T21:40:32.142+0845[Australia/Eucla]')", "2015-07-21T21:40:32.142+08:45[Australia/Eucla]"),
    ("datetime({year: 1984, month: 7, day: 20, timezone: 'Europe/Stockholm'})",
     "1984-07-20T00:00+02:00[Europe/Stockholm]"),  # summer time from the zone's rules
    ("datetime('1818-07-21T21:40:32.142[Europe/Stockholm]')",
     "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"),  # local mean time, from the tzdata package
    ("duration('P0.75M')", "P22DT19H51M49.5S"),
    ("duration({seconds: -60, milliseconds: -1})", "PT-1M-0.001S"),
    ("date('+999999999-12-31')", "+999999999-12-31"),
])
def test_values_print_as_iso_8601(expr: str, text: str) -> None:
    assert one(f"RETURN {expr} AS v, toString({expr}) AS s") == [text, text]


def test_components() -> None:
    d = "datetime({year: 1984, month: 11, day: 11, hour: 12, minute: 31, second: 14, nanosecond: 645876123, " \
        "timezone: 'Europe/Stockholm'})"
    assert one(f"WITH {d} AS d RETURN d.week, d.weekYear, d.dayOfWeek, d.quarter, d.ordinalDay, d.millisecond, "
               "d.timezone, d.offset, d.epochSeconds") == [45, 1984, 7, 4, 316, 645, "Europe/Stockholm", "+01:00",
                                                           469020674]
    assert one("RETURN date('1984-01-01').weekYear, duration('P1Y4M10DT1H1M1.5S').minutesOfHour") == [1983, 1]
    with pytest.raises(CypherError, match="no component `hour`"):
        one("RETURN date('2020-01-01').hour")


def test_arithmetic_and_between() -> None:
    assert one("RETURN date('2024-01-31') + duration('P1M'), localtime('23:30') + duration('PT1H'), "
               "duration('PT1H') * 1.5, duration('P1D') / 2") == ["2024-02-29", "00:30", "PT1H30M", "PT12H"]
    assert one("RETURN duration.between(date('1984-10-11'), date('2015-06-24')), "
               "duration.inDays(date('2024-01-01'), date('2024-03-01')), "
               "duration.inSeconds(datetime('2017-10-28T23:00+02:00[Europe/Stockholm]'), "
               "datetime('2017-10-29T04:00+01:00[Europe/Stockholm]'))") == ["P30Y8M13D", "P60D", "PT6H"]
    with pytest.raises(CypherError, match="duration.between"):
        one("RETURN date('2024-01-02') - date('2024-01-01')")


def test_comparison_ordering_and_grouping() -> None:
    assert one("RETURN date('2024-01-01') < date('2024-01-02'), time('10:00+01:00') = time('10:00+01:00'), "
               "date('2024-01-01') < localdatetime('2024-01-02T00:00'), duration('PT1H') < duration('PT2H')") == \
        [True, True, None, None]  # different kinds, and durations, do not compare
    rows = run_query(nx.MultiDiGraph(), "UNWIND [date('2024-03-01'), 'text', datetime('2024-01-01T00:00Z'), "
                     "date('2023-01-01'), 1, duration('P1D')] AS v RETURN v ORDER BY v").rows
    assert [r[0] for r in rows] == ["2024-01-01T00:00Z", "2023-01-01", "2024-03-01", "P1D", "text", 1]
    assert one("UNWIND [date('2024-01-01'), date({year: 2024}), duration('PT60S'), duration('PT1M')] AS v "
               "RETURN count(DISTINCT v)") == [2]


def test_truncate_and_clock() -> None:
    assert one("RETURN date.truncate('week', date('2024-05-16')), "
               "datetime.truncate('month', datetime('2024-05-16T12:00+02:00'), {timezone: 'Europe/Stockholm'})") \
        == ["2024-05-13", "2024-05-01T00:00+02:00[Europe/Stockholm]"]
    same, zone = one("RETURN datetime() = datetime.statement(), datetime({timezone: 'Asia/Tokyo'}).timezone")
    assert same is True and zone == "Asia/Tokyo"


def test_parameters_are_not_temporal_but_convert() -> None:
    assert one("RETURN date($d) > date('2024-01-01')", {"d": "2025-06-01"}) == [True]


@pytest.mark.parametrize(("query", "message"), [
    ("RETURN date('2024-02-30')", "invalid date"),
    ("RETURN date('next tuesday')", "cannot parse 'next tuesday' as a date"),
    ("RETURN datetime({year: 2024, timezone: 'Mars/Olympus'})", "unknown time zone 'Mars/Olympus'"),
    ("RETURN date({month: 3})", "a date needs a year"),
    ("RETURN duration({parsecs: 1})", "unknown field 'parsecs'"),
    ("RETURN localtime({hour: 24})", "invalid time"),
    ("RETURN date.truncate('fortnight', date())", "unknown truncation unit 'fortnight'"),
])
def test_bad_input_is_one_clear_error(query: str, message: str) -> None:
    with pytest.raises(CypherError, match=message) as info:
        one(query)
    assert "\n" not in str(info.value)


def test_neo4j_driver_values_print_as_the_engine_prints_them() -> None:
    import neo4j.time as nt
    import pytz

    from kg.store.neo4j_values import to_json

    stockholm = pytz.timezone("Europe/Stockholm").localize(nt.DateTime(2015, 7, 21, 21, 40, 32, 142000000)
                                                             .to_native())
    driver = [nt.Date(2024, 1, 2), nt.Time(12, 31, 14, 645876123), nt.Time(9, 0, 0, 0, tzinfo=pytz.FixedOffset(60)),
              nt.DateTime(1984, 10, 11, 12, 31, 14, 1), nt.DateTime(1984, 10, 11, 12, 0, 0, 0, tzinfo=pytz.utc),
              nt.DateTime.from_native(stockholm), nt.Duration(months=14, days=3, seconds=-61, nanoseconds=5)]
    engine = one("RETURN date('2024-01-02'), localtime('12:31:14.645876123'), time('09:00+01:00'), "
                 "localdatetime('1984-10-11T12:31:14.000000001'), datetime('1984-10-11T12:00Z'), "
                 "datetime('2015-07-21T21:40:32.142[Europe/Stockholm]'), "
                 "duration({months: 14, days: 3, seconds: -61, nanoseconds: 5})")
    assert [to_json(v, {}) for v in driver] == engine
