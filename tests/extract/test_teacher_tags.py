"""scripts/teacher.py turns word-piece predictions into word spans for the silver data (no torch needed here)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from teacher import TAGS, _spans, _word_tags  # noqa: E402


def test_bio_tags_become_spans() -> None:
    tags = ["B-method", "I-method", "O", "B-task", "B-dataset", "I-dataset", "I-dataset"]
    assert _spans(tags) == [(0, 2, "method"), (3, 4, "task"), (4, 7, "dataset")]


def test_a_stray_inside_tag_starts_a_span_and_a_type_change_ends_one() -> None:
    assert _spans(["O", "I-metric", "I-metric", "I-task"]) == [(1, 3, "metric"), (3, 4, "task")]
    assert _spans(["O", "O"]) == []


def test_each_word_takes_the_tag_of_its_first_word_piece() -> None:
    # [CLS] LLa ##DA ##-8B uses [SEP]: word 0 is three pieces, word 1 one; the later pieces' tags are ignored.
    word_ids = [None, 0, 0, 0, 1, None]
    pred = [0, TAGS.index("B-method"), TAGS.index("I-task"), 0, TAGS.index("B-task"), 0]
    assert _word_tags(word_ids, pred, 2) == ["B-method", "B-task"]
