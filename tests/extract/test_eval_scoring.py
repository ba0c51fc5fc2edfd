"""`kg eval` scoring: strict entities and relations, Generic left out on both sides (kg.evaluate.score)."""

from __future__ import annotations

from kg.evaluate import SCIERC_TYPES, Doc, score
from kg.extract.types import Extraction, Mention, Relation

TEXT = "We use BERT for parsing on PTB , unlike this method ."
BERT, PARSING, PTB, THIS = (7, 11), (16, 23), (27, 30), (40, 51)


def gold() -> Doc:
    return Doc("d", TEXT, [(*BERT, "Method"), (*PARSING, "Task"), (*PTB, "Material")],
               relations=[(BERT, PARSING, "USED_FOR"), (PARSING, PTB, "EVALUATED_ON"),
                          (BERT, THIS, "COMPARED_WITH")],
               ignore={THIS})


def pred(types: tuple[str, str, str, str], relations: list[tuple[int, int, str]]) -> Extraction:
    spans = [BERT, PARSING, PTB, THIS]
    ents = [Mention(s, e, TEXT[s:e], t) for (s, e), t in zip(spans, types, strict=True)]
    return Extraction(entities=ents, relations=[Relation(h, t, ty) for h, t, ty in relations])


def test_right_spans_types_and_relations_score_full_marks() -> None:
    s = score([gold()], [pred(("method", "task", "dataset", "concept"),
                              [(0, 1, "USED_FOR"), (1, 2, "EVALUATED_ON")])], SCIERC_TYPES)
    assert (s["ALL"].tp, s["ALL"].fp, s["ALL"].fn) == (3, 0, 0)  # the Generic span is neither right nor wrong
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (2, 0, 0)
    assert s["REL_SET_ASIDE"].fn == 1  # the gold relation with a Generic argument


def test_a_relation_on_a_mistyped_argument_is_a_false_positive() -> None:
    s = score([gold()], [pred(("method", "concept", "dataset", "concept"),
                              [(0, 1, "USED_FOR"), (1, 2, "EVALUATED_ON")])], SCIERC_TYPES)
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (0, 2, 2)


def test_wrong_relation_type_or_direction_is_wrong_and_symmetric_types_are_unordered() -> None:
    s = score([gold()], [pred(("method", "task", "dataset", "concept"),
                              [(1, 0, "USED_FOR"), (1, 2, "PART_OF")])], SCIERC_TYPES)
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (0, 2, 2)
    g = Doc("d", TEXT, [(*BERT, "Method"), (*PTB, "Method")], relations=[(BERT, PTB, "COMPARED_WITH")])
    s = score([g], [pred(("method", "task", "method", "concept"), [(2, 0, "COMPARED_WITH")])], SCIERC_TYPES)
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (1, 0, 0)


def test_relations_with_a_generic_argument_are_not_scored_either_way() -> None:
    s = score([gold()], [pred(("method", "task", "dataset", "concept"), [(0, 3, "COMPARED_WITH")])], SCIERC_TYPES)
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (0, 0, 2)


def test_predictions_in_a_document_without_gold_relations_count() -> None:
    g = Doc("d", TEXT, [(*BERT, "Method"), (*PARSING, "Task")])
    s = score([g], [pred(("method", "task", "dataset", "concept"), [(0, 1, "USED_FOR")])], SCIERC_TYPES)
    assert (s["REL"].tp, s["REL"].fp, s["REL"].fn) == (0, 1, 0)
