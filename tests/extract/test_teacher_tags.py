"""kg_train/teacher.py turns word-piece predictions into word spans for the silver data (no torch needed here)."""

from __future__ import annotations

from kg_train.teacher import TAGS, _spans, _word_tags


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


def test_gold_sentences_carry_entities_and_unknown_words_in_word_offsets() -> None:
    """kg_train/teacher_gold.py reads kg-gold's abstracts sentence by sentence, whitespace tokens left out."""
    import spacy
    from spacy.tokens import Doc

    from kg_train.teacher_gold import TAGS as GOLD_TAGS
    from kg_train.teacher_gold import sentences

    words = ["We", "train", "BERT", "on", "GLUE", ".", "\n", "LLM", "-based", "agents", "win", "."]
    doc = Doc(spacy.blank("en").vocab, words=words, spaces=[True] * 5 + [False, False] + [True] * 4 + [False])
    doc.set_ents([doc.char_span(doc[2].idx, doc[2].idx + 4, label="model"),
                  doc.char_span(doc[4].idx, doc[4].idx + 4, label="dataset")],
                 missing=[doc[7:9]], default="outside")
    out = [s for s, _ in sentences(doc)]
    assert [s["words"] for s in out] == [words[:6], words[7:]]
    assert out[0]["ents"] == [[2, 3, "model"], [4, 5, "dataset"]] and out[0]["missing"] == []
    assert out[1]["ents"] == [] and out[1]["missing"] == [[0, 2]]
    assert "B-concept" in GOLD_TAGS and len(GOLD_TAGS) == 13
