"""Leaderboards (issue 34): a dataset's reported results, ranked per metric in the metric's direction.

Pure functions over a store's reads (one Cypher query, the same on every store), used by ``kg leaderboard``,
``GET /leaderboards/{dataset}`` and the dataset's view. Results are grouped by metric (the metric's entity, as
entity resolution decides, else the metric as written), kind and unit: values of different kinds, metrics or
units are never ranked together. A group is ranked when its metric's direction is known
(``kg/data/metric_direction.tsv``); scores of an unknown metric, or none, and gains (each against its own
baseline) are listed unranked. One row per paper and system: its best value in the group, with its sentence.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, cast

from kg.canon import canonical_key
from kg.errors import InputError, NotFoundError
from kg.graph import ENTITY_LABELS
from kg.models import EntityRef, Leaderboard, LeaderboardGroup, LeaderboardRow
from kg.store.base import Store

Direction = Literal["higher", "lower"]
KINDS = ("score", "gain")
MAX_RESULTS = 200_000  # results one dataset may have read (the query's row cap)
QUERY_TIMEOUT_S = 30.0


@lru_cache(maxsize=1)
def metric_directions() -> dict[str, Direction]:
    """The known metrics' directions by canonical key (``kg/data/metric_direction.tsv``)."""
    out: dict[str, Direction] = {}
    text = resources.files("kg.data").joinpath("metric_direction.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, direction = line.split("\t")
        if direction not in ("higher", "lower"):
            raise ValueError(f"metric_direction.tsv: {key}: direction {direction!r} is neither higher nor lower")
        out[canonical_key(key)] = cast(Direction, direction)
    return out


_AT_K = re.compile(r"\s*@\s*\d+$")  # "hits@10", "pass@1"
_VERSION = re.compile(r"(?<=[a-z])\d+$")  # "bleu4", "rouge1" when rouge1 is not listed
_FILLER = re.compile(r"\s+(?:score|metric|value)$")  # "F1 score" is F1, as the annotators write it


def _forms(key: str) -> list[str]:
    out = [key]
    for pattern in (_FILLER, _AT_K, _VERSION):
        shorter = canonical_key(pattern.sub("", out[-1]))
        if shorter and shorter != out[-1]:
            out.append(shorter)
    return out


def metric_direction(names: Iterable[str | None]) -> Direction | None:
    """Which way is better for a metric known by any of ``names`` (its entity's name, key and aliases, the
    text as written): an entry of the table for one of them (or a form without "score", "@k" or a trailing
    version), else the longest entry one of them ends with as whole words; None when unknown."""
    table = metric_directions()
    keys = [f for n in names if n for f in _forms(canonical_key(n))]
    for k in keys:
        if k in table:
            return table[k]
    best: tuple[int, Direction] | None = None
    for k in keys:
        words = k.split()
        for i in range(1, len(words)):
            tail = " ".join(words[i:])
            if tail in table and (best is None or len(tail) > best[0]):
                best = (len(tail), table[tail])
    return best[1] if best else None


def results_query(label: str) -> str:
    """Every result on the ``label`` entity ``$id``, with its metric, system and paper (one row each)."""
    if label not in ENTITY_LABELS.values():
        raise ValueError(f"not an entity label: {label!r}")
    return (f"MATCH (d:{label} {{id: $id}})<-[:ON_DATASET]-(r:Result) "
            "OPTIONAL MATCH (r)-[:IN_METRIC]->(m) "
            "OPTIONAL MATCH (r)-[:ACHIEVED_BY]->(s) "
            "OPTIONAL MATCH (p:Paper)-[:REPORTS]->(r) "
            "RETURN r.id AS id, r.value AS value, r.unit AS unit, r.text AS text, r.kind AS kind, "
            "r.system AS system, r.metric AS metric, r.sentence AS sentence, r.year AS year, r.paper AS paper, "
            "r.start AS start, m.id AS metric_id, m.name AS metric_name, m.key AS metric_key, "
            "m.aliases AS metric_aliases, s.id AS system_id, s.name AS system_name, p.title AS title")


def dataset_results(store: Store, entity: EntityRef) -> list[dict[str, Any]]:
    """The results on ``entity`` as dicts (the columns of ``results_query``), in paper and text order."""
    r = store.cypher(results_query(ENTITY_LABELS[entity.type]), {"id": entity.id}, max_rows=MAX_RESULTS,
                     timeout_s=QUERY_TIMEOUT_S)
    rows = [dict(zip(r.columns, row, strict=True)) for row in r.rows]
    seen: set[str] = set()
    out = []
    for row in sorted(rows, key=lambda x: (str(x["paper"]), x["start"] or 0, str(x["id"]))):
        if row["id"] not in seen:  # a result with two metric or system edges counts once, its first
            seen.add(row["id"])
            out.append(row)
    return out


def _group_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    metric = row["metric_id"] or (f"text:{canonical_key(row['metric'])}" if row["metric"] else "")
    return metric, row["kind"], row["unit"] or "number"


def _system_key(row: Mapping[str, Any]) -> str:
    if row["system_id"]:
        return row["system_id"]
    return f"text:{canonical_key(row['system'])}" if row["system"] else ""


def _metric_matches(rows: list[dict[str, Any]], wanted: str, wanted_id: str | None) -> bool:
    key = canonical_key(wanted)
    r = rows[0]
    if wanted_id is not None and r["metric_id"] == wanted_id:
        return True
    names = [r["metric_name"], r["metric_key"], *(r["metric_aliases"] or []), *(x["metric"] for x in rows)]
    return any(n and canonical_key(n) == key for n in names)


def _best(rows: list[dict[str, Any]], direction: Direction | None) -> dict[str, Any]:
    valued = [r for r in rows if r["value"] is not None]
    if direction is None or not valued:
        return rows[0]
    pick = max if direction == "higher" else min
    return pick(valued, key=lambda r: float(r["value"]))


def _row(r: Mapping[str, Any], rank: int | None, n: int) -> LeaderboardRow:
    return LeaderboardRow(rank=rank, value=r["value"], text=r["text"] or "", system=r["system"] or r["system_name"],
                          system_id=r["system_id"], metric=r["metric"], paper_id=r["paper"],
                          paper_title=r["title"] or r["paper"], year=r["year"], sentence=r["sentence"] or "",
                          result_id=r["id"], results=n)


def rank_group(rows: list[dict[str, Any]], direction: Direction | None, kind: str) -> list[LeaderboardRow]:
    """One row per paper and system (its best value), ranked when the direction is known and the kind a score;
    equal values share a rank (1, 1, 3). Unranked: gains largest first, else newest first."""
    by_entry: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by_entry.setdefault((r["paper"], _system_key(r)), []).append(r)
    ranked = direction is not None and kind == "score"
    best = [(_best(rs, direction if ranked else None if kind == "score" else "higher"), len(rs))
            for rs in by_entry.values()]

    def value(r: Mapping[str, Any]) -> float:
        v = r["value"]
        if v is None:
            return float("inf")  # no number: last either way
        return -float(v) if (direction == "higher" or not ranked) else float(v)

    if ranked or kind == "gain":
        best.sort(key=lambda b: (value(b[0]), -(b[0]["year"] or 0), b[0]["paper"], b[0]["start"] or 0))
    else:
        best.sort(key=lambda b: (-(b[0]["year"] or 0), b[0]["paper"], b[0]["start"] or 0))
    out: list[LeaderboardRow] = []
    for i, (r, n) in enumerate(best):
        rank = None
        if ranked and r["value"] is not None:
            prev = out[-1] if out else None
            rank = prev.rank if prev is not None and prev.value == r["value"] and prev.rank else i + 1
        out.append(_row(r, rank, n))
    return out


def _group_name(rows: list[dict[str, Any]]) -> str | None:
    r = rows[0]
    if r["metric_name"]:
        return str(r["metric_name"])
    written = Counter(x["metric"] for x in rows if x["metric"])
    return min(written.items(), key=lambda kv: (-kv[1], kv[0]))[0] if written else None


def build_leaderboard(entity: EntityRef, results: list[dict[str, Any]], *, kind: str = "score",
                      metric: str | None = None, metric_id: str | None = None, limit: int = 20) -> Leaderboard:
    """The leaderboard of ``entity`` from its results (``dataset_results``): groups of ``kind`` (and of the
    ``metric`` filter: its entity ``metric_id`` or any name it goes by), most rows first, each cut at ``limit``."""
    if kind not in KINDS:
        raise InputError(f"unknown kind '{kind}'; choose from: {', '.join(KINDS)}")
    counts = Counter(str(r["kind"]) for r in results)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        if r["kind"] == kind:
            groups.setdefault(_group_key(r), []).append(r)
    if metric is not None:
        kept = {k: rs for k, rs in groups.items() if _metric_matches(rs, metric, metric_id)}
        if not kept and groups:
            names = sorted({n for rs in groups.values() if (n := _group_name(rs))}, key=str.casefold)
            raise NotFoundError(f"no {kind} results on {entity.name} in metric '{metric}'"
                                + (f"; its metrics: {', '.join(names[:10])}" if names else ""))
        groups = kept
    out = []
    for (_, knd, unit), rs in groups.items():
        r0 = rs[0]
        direction = metric_direction([r0["metric_name"], r0["metric_key"], *(r0["metric_aliases"] or []),
                                      *(x["metric"] for x in rs)]) if any(x["metric"] for x in rs) else None
        rows = rank_group(rs, direction, knd)
        out.append(LeaderboardGroup(metric=_group_name(rs), metric_id=r0["metric_id"], kind=cast(Any, knd),
                                    unit=cast(Any, unit), direction=direction,
                                    ranked=direction is not None and knd == "score", total=len(rows),
                                    rows=rows[:limit]))
    out.sort(key=lambda g: (-g.total, not g.ranked, g.metric is None, (g.metric or "").casefold(), g.unit))
    other = next((k for k in KINDS if k != kind), "gain")
    note = ""
    if not results:
        note = f"no reported results on {entity.name}"
    elif not out:
        note = f"no {kind} results on {entity.name}" + (f"; {counts[other]} {other}s (kind {other})"
                                                        if counts[other] else "")
    elif kind == "gain":
        note = "gains are each against their own baseline: listed largest first, not ranked"
    return Leaderboard(dataset=entity, kind=cast(Any, kind), metric=metric, results=dict(sorted(counts.items())),
                       groups=out, note=note)


def entity_ref(store: Store, entity_id: str) -> EntityRef:
    e = store.get_entity(entity_id, paper_limit=1, neighbour_limit=1)
    return EntityRef(id=e.id, name=e.name, type=e.type, paper_count=e.paper_count)


def leaderboard(store: Store, ref: str, *, kind: str = "score", metric: str | None = None,
                limit: int = 20) -> Leaderboard:
    """The leaderboard of the entity ``ref`` names (id, name or alias, as ``kg entity``): NotFoundError when
    none does."""
    entity = entity_ref(store, store.resolve_entity(ref))
    metric_id = None
    if metric is not None:
        with contextlib.suppress(NotFoundError):  # a metric no entity is named so is matched by its text
            metric_id = store.resolve_entity(metric)
    return build_leaderboard(entity, dataset_results(store, entity), kind=kind, metric=metric,
                             metric_id=metric_id, limit=limit)
