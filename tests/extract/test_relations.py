"""The within-sentence relation classifier's training pairs: the extractor's own mentions, labelled by gold."""

from __future__ import annotations

from kg.extract.pipeline import RULES_MODEL, load_nlp
from kg.extract.relmodel import NONE, candidate_pairs
from kg_train.relations import run_time_examples


def _label_of(examples: list[tuple[list[str], str]]) -> list[str]:
    return [lab for _, lab in examples]


def test_run_time_pairs_take_the_gold_relation_of_the_entities_their_ends_name() -> None:
    doc = load_nlp(RULES_MODEL)("We test BERT on GLUE and BERT on SQuAD. GLUE is hard.")
    words = [t.text for t in doc]
    at = [i for i, w in enumerate(words) if w in ("BERT", "GLUE", "SQuAD")]
    ents = [(i, i + 1, "dataset" if words[i] != "BERT" else "model") for i in at]
    sent_of = [0 if i < 10 else 1 for i in at]
    names = [words[i].lower() for i in at]
    # SQuAD names no gold entity: a spurious span of the extractor, its pairs are NONE
    ids = [{"BERT"} if w == "BERT" else {"GLUE"} if w == "GLUE" else set() for w in (words[i] for i in at)]
    ex = run_time_examples(doc, ents, sent_of, names, ids, {("BERT", "GLUE"): "EVALUATED_ON"})
    # pairs in order: BERT-GLUE, BERT-SQuAD, GLUE-BERT, GLUE-SQuAD, BERT-SQuAD (BERT-BERT is one name, left out;
    # the last GLUE shares no sentence)
    assert _label_of(ex) == ["EVALUATED_ON>", NONE, "EVALUATED_ON<", NONE, NONE]
    assert len(ex) == len([p for p in candidate_pairs(ents, sent_of) if names[p[0]] != names[p[1]]])


def test_compared_with_has_no_direction() -> None:
    doc = load_nlp(RULES_MODEL)("BERT beats GPT.")
    ents = [(0, 1, "model"), (2, 3, "model")]
    ex = run_time_examples(doc, ents, [0, 0], ["bert", "gpt"], [{"BERT"}, {"GPT"}],
                           {("GPT", "BERT"): "COMPARED_WITH"})
    assert _label_of(ex) == ["COMPARED_WITH>"]
