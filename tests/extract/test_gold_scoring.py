"""kg's kg-gold scorer (kg.evaluate_gold) gives exactly the figures of the reference score.py on a fixture."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kg.evaluate_gold import TYPES, gold_key, load_gold, score_rows

FIX = Path(__file__).parent / "fixtures"
GOLD, PRED = FIX / "kg_gold_gold.jsonl", FIX / "kg_gold_pred.jsonl"
SCORE_PY = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "eval" / "kg-gold" / "score.py"
_LINE = re.compile(r"^\s*(.+?)\s+P\s+([\d.]+) R\s+([\d.]+) F1\s+([\d.]+)\s+\(pred (\d+), gold (\d+)\)$")
_NAMES = {"untyped": "untyped", "typed, method=model": "typed_mm", "relations": "relations", "typed": "typed"}


def kg_figures() -> dict[str, dict]:
    gold = load_gold(GOLD)
    by = {r["id"]: r for r in map(json.loads, PRED.read_text().splitlines())}
    return score_rows(gold, [by[g["id"]] for g in gold])


def parse_score_py(out: str) -> dict[str, dict]:
    got = {}
    for line in out.splitlines():
        m = _LINE.match(line)
        if m:
            name = m.group(1)
            got[_NAMES.get(name, name)] = {"p": float(m.group(2)), "r": float(m.group(3)), "f1": float(m.group(4)),
                                           "pred": int(m.group(5)), "gold": int(m.group(6))}
    return got


@pytest.mark.skipif(not SCORE_PY.exists(), reason="../shared/data/eval/kg-gold/score.py not beside the checkout")
def test_same_figures_as_score_py() -> None:
    out = subprocess.run([sys.executable, str(SCORE_PY), str(GOLD), str(PRED)], capture_output=True, text=True,
                         check=True).stdout
    ref = parse_score_py(out)
    assert set(ref) == {*TYPES, "untyped", "typed_mm", "relations", "typed"}
    mine = kg_figures()
    for k, v in ref.items():
        assert {x: mine[k][x] for x in v} == v, k


def test_figures_on_the_fixture() -> None:
    """The same figures written out, so the check holds where score.py is not at hand."""
    s = kg_figures()
    assert (s["typed"]["p"], s["typed"]["r"], s["typed"]["f1"]) == (53.3, 66.7, 59.3)
    assert (s["typed_mm"]["f1"], s["untyped"]["f1"], s["relations"]["f1"]) == (74.1, 81.5, 83.3)
    assert (s["dataset"]["pred"], s["concept"]["pred"], s["concept"]["gold"]) == (3, 3, 1)
    # proposed: IterDPO and MMLongBench-Write right (any type), LongWriter-V-22k wrongly flagged
    assert (s["proposed"]["p"], s["proposed"]["r"], s["proposed"]["pred"], s["proposed"]["gold"]) == (
        66.7, 100.0, 3, 2)


def test_key_is_score_pys() -> None:
    assert gold_key("Large Vision-Language Models") == "large vision language model"
    assert gold_key("LongWriter_V/22k") == gold_key("LongWriter-V-22k") == "longwriter v 22k"
    assert gold_key("GPT-4o.") == "gpt 4o" and gold_key("analysis") == "analysis" and gold_key("LLMs") == "llm"
    assert gold_key("strategies") == "strategy" and gold_key("$") == ""
