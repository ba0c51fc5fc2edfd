"""Node-level scoring against kg-gold (kg's own six-type gold set), the same figures as its reference score.py.

Per abstract, the distinct (key(name), type) pairs an extractor outputs are matched against the gold entities: a
gold entity is found when one of its surface forms (text or an alias) has the same key and the type is equal
(also scored with method and model as one type, and untyped). Precision counts predicted pairs that match a gold
entity, recall gold entities matched. A relation matches a gold one when both ends match that relation's entities
by key and the type is equal (COMPARED_WITH either way round). ``proposed`` (not in score.py) scores the distinct
keys an extractor flags as the paper's contributions against the gold entities flagged ``proposed``, any type.
The key and the matching follow score.py line by line; tests/extract/test_gold_scoring.py runs both on a fixture.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kg.errors import InputError
from kg.extract.types import Extraction

TYPES = ("method", "model", "dataset", "task", "metric", "concept")

_DASH = re.compile(r"[\-\u2010-\u2015\u2212_/]+")
_NONW = re.compile(r"[^\w.+#@]+")
_PLURAL_KEEP = re.compile(r"(ss|us|is|ics|ous)$")


def gold_key(s: str) -> str:
    """score.py's key: case-folded, dashes/underscores/slashes and other non-word runs as spaces, last word singular."""
    s = _NONW.sub(" ", _DASH.sub(" ", s.casefold())).strip(" .")
    w = s.split()
    if not w:
        return ""
    last = w[-1]
    if len(last) > 3 and last.isalpha():
        if last.endswith("ies"):
            last = last[:-3] + "y"
        elif last.endswith("s") and not _PLURAL_KEEP.search(last):
            last = last[:-1]
    w[-1] = last
    return " ".join(w)


def load_gold(path: Path) -> list[dict[str, Any]]:
    """kg-gold rows; a malformed line is an InputError naming the file and line."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                row["id"], row["text"]  # noqa: B018 - required fields
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{path}:{n}: not a kg-gold row ({exc})") from exc
            rows.append(row)
    return rows


def _gold_entities(row: dict[str, Any]) -> list[tuple[set[str], str, str, bool]]:
    out = []
    for e in row.get("entities", []):
        ks = {gold_key(x) for x in [e["text"], *e.get("aliases", [])]} - {""}
        if ks:
            out.append((ks, e["type"], e["text"], bool(e.get("proposed"))))
    return out


def _unify(t: str, merge_model: bool) -> str:
    return "method" if merge_model and t == "model" else t


def _count(gold_rows: Sequence[dict], pred_rows: Sequence[dict], *, merge_model: bool = False,
           typed: bool = True) -> tuple[Counter, dict[str, Counter]]:
    """(tp_p, n_p, tp_g, n_g) overall and per type, relation counts (r-prefixed) and proposed (p-prefixed)."""
    c: Counter = Counter()
    per: dict[str, Counter] = defaultdict(Counter)
    for g, p in zip(gold_rows, pred_rows, strict=True):
        ge = _gold_entities(g)
        pents = p.get("entities", [])
        pe = {(gold_key(e["text"]), _unify(e["type"], merge_model) if typed else "*") for e in pents}
        pe = {x for x in pe if x[0]}
        gtyped = [(ks, _unify(t, merge_model) if typed else "*") for ks, t, _, _ in ge]
        for k, t in pe:
            hit = any(k in ks and t == gt for ks, gt in gtyped)
            c["tp_p"] += hit
            c["n_p"] += 1
            per[t]["tp_p"] += hit
            per[t]["n_p"] += 1
        for ks, gt in gtyped:
            hit = any(k in ks and t == gt for k, t in pe)
            c["tp_g"] += hit
            c["n_g"] += 1
            per[gt]["tp_g"] += hit
            per[gt]["n_g"] += 1
        # proposed: distinct predicted keys flagged proposed against gold entities flagged proposed
        pp = {gold_key(e["text"]) for e in pents if e.get("proposed")} - {""}
        gp = [ks for ks, _, _, prop in ge if prop]
        for k in pp:
            c["ptp_p"] += any(k in ks for ks in gp)
            c["pn_p"] += 1
        for ks in gp:
            c["ptp_g"] += any(k in ks for k in pp)
            c["pn_g"] += 1
        by_text = {t: ks for ks, _, t, _ in ge}
        gr = [(by_text[r["head"]], r["type"], by_text[r["tail"]]) for r in g.get("relations", [])
              if r.get("head") in by_text and r.get("tail") in by_text]
        pr = set()
        for r in p.get("relations", []):
            h, t = r.get("head"), r.get("tail")
            if isinstance(h, int) and isinstance(t, int) and 0 <= h < len(pents) and 0 <= t < len(pents):
                h, t = gold_key(pents[h]["text"]), gold_key(pents[t]["text"])
            elif isinstance(h, str) and isinstance(t, str):
                h, t = gold_key(h), gold_key(t)
            else:
                continue
            pr.add((h, r.get("type"), t))
        for x in pr:
            c["rtp_p"] += any(_same(x, y) for y in gr)
            c["rn_p"] += 1
        for y in gr:
            c["rtp_g"] += any(_same(x, y) for x in pr)
            c["rn_g"] += 1
    return c, per


def _same(pk: tuple, gk: tuple) -> bool:
    (h, ty, t), (gh, gty, gt) = pk, gk
    if ty != gty:
        return False
    if h in gh and t in gt:
        return True
    return ty == "COMPARED_WITH" and h in gt and t in gh


def _prf(c: Counter, pre: str = "") -> dict[str, float | int]:
    tp_p, n_p, tp_g, n_g = c[pre + "tp_p"], c[pre + "n_p"], c[pre + "tp_g"], c[pre + "n_g"]
    p = tp_p / n_p if n_p else 0.0
    r = tp_g / n_g if n_g else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"p": round(100 * p, 1), "r": round(100 * r, 1), "f1": round(100 * f, 1), "pred": n_p, "gold": n_g}


def score_rows(gold_rows: Sequence[dict], pred_rows: Sequence[dict]) -> dict[str, dict[str, float | int]]:
    """score.py's figures (``typed``, ``typed_mm`` = method=model, ``untyped``, each type, ``relations``) plus
    ``proposed``; each {p, r, f1, pred, gold}. ``pred_rows[i]`` is the prediction for ``gold_rows[i]``."""
    ct, per = _count(gold_rows, pred_rows)
    cm, _ = _count(gold_rows, pred_rows, merge_model=True)
    cu, _ = _count(gold_rows, pred_rows, typed=False)
    out = {t: _prf(per[t]) for t in TYPES}
    out |= {"untyped": _prf(cu), "typed_mm": _prf(cm), "relations": _prf(ct, "r"), "typed": _prf(ct),
            "proposed": _prf(ct, "p")}
    return out


def prediction_rows(gold_rows: Sequence[dict], preds: Iterable[Extraction]) -> list[dict[str, Any]]:
    """Extractions as score.py's prediction rows (the ``kg extract`` contract), with each entity's ``proposed``."""
    out = []
    for g, x in zip(gold_rows, preds, strict=True):
        row = x.to_contract(g["id"])
        for e, m in zip(row["entities"], x.entities, strict=True):
            e["proposed"] = m.proposed
        out.append(row)
    return out


RECORDED = Path(__file__).resolve().parent / "extract" / "recorded.json"


def recorded(name: str) -> dict[str, Any] | None:
    """kg-gold dev figures of an earlier extractor kept for comparison (kg/extract/recorded.json), if any."""
    if not RECORDED.exists():
        return None
    return json.loads(RECORDED.read_text(encoding="utf-8")).get(name)
