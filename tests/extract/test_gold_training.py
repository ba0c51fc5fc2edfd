"""How kg-gold becomes training data (scripts/train_gold.py) and the small learned parts built from it."""

from __future__ import annotations

from pathlib import Path

from kg.extract.gazetteer import Gazetteer
from kg.extract.propmodel import ProposedModel
from kg_train.gazetteer import build_gazetteer
from kg_train.train_gold import project


def test_projection_finds_every_form_longest_first_on_word_boundaries() -> None:
    text = ("Large language models (LLMs) beat language models. LLM-based agents use LLMs; "
            "supervised fine-tuning (SFT) and Supervised fine-tuning again; SFTs are no match.")
    ents = [{"text": "Large language models", "type": "model", "aliases": ["LLMs"]},
            {"text": "language models", "type": "model", "aliases": []},
            {"text": "supervised fine-tuning", "type": "method", "aliases": ["SFT"]}]
    got = [(text[s:e], ty, i) for s, e, ty, i in project(text, ents)]
    assert got == [("Large language models", "model", 0), ("LLMs", "model", 0), ("language models", "model", 1),
                   ("LLMs", "model", 0), ("supervised fine-tuning", "method", 2), ("SFT", "method", 2),
                   ("Supervised fine-tuning", "method", 2)]


def test_short_forms_match_only_in_their_own_case() -> None:
    got = project("The SFT stage; sft is lower case.", [{"text": "SFT", "type": "method", "aliases": []}])
    assert [(s, e) for s, e, _, _ in got] == [(4, 7)]


def test_gazetteer_keeps_one_type_per_name_and_phrases_annotators_leave_out(tmp_path: Path) -> None:
    annotated = [{"large language model": "model"}, {"large language model": "model", "bleu": "metric"},
                 {"large language model": "method"}, {"large language model": "model"}, {}]
    seen = [{"extensive experiment"}] * 5
    build_gazetteer(annotated, seen, tmp_path / "g.json")
    g = Gazetteer.load(tmp_path / "g.json")
    assert g.type_of("large language model") == "model"  # 3 of 4 abstracts
    assert g.type_of("bleu") is None  # one abstract only
    assert not g.is_entity("extensive experiment") and g.is_entity("large language model")


def test_proposed_model_scores_features() -> None:
    m = ProposedModel({"bias": -2.0, "weights": {"WE_PROPOSE": 3.0, "NAME=True": 0.5}, "threshold": 0.5})
    assert m.prob({"WE_PROPOSE", "NAME=True"}) > 0.8 > 0.2 > m.prob({"NAME=True"})


def test_relation_ceiling_feeds_the_relation_steps_gold_mentions(extractor) -> None:
    """scripts/relation_ceiling.py: every occurrence of each gold entity, with its gold type and proposed flag,
    is what the shipped relation steps judge; relations join those mentions, never one name to itself."""
    from kg_train.relation_ceiling import gold_mention_rows

    row = {"id": "x", "text": "We propose FlowNet, a model for optical flow estimation. FlowNet is evaluated on "
           "the Sintel benchmark with end-point error.",
           "entities": [{"text": "FlowNet", "type": "model", "aliases": [], "proposed": True},
                        {"text": "optical flow estimation", "type": "task", "aliases": []},
                        {"text": "Sintel", "type": "dataset", "aliases": []},
                        {"text": "end-point error", "type": "metric", "aliases": []}],
           "relations": []}
    (out,) = gold_mention_rows(extractor, [row])
    assert [(e["text"], e["type"], e["proposed"]) for e in out["entities"]] == [
        ("FlowNet", "model", True), ("optical flow estimation", "task", False), ("FlowNet", "model", True),
        ("Sintel", "dataset", False), ("end-point error", "metric", False)]
    ents = out["entities"]
    pairs = {(ents[r["head"]]["text"], r["type"], ents[r["tail"]]["text"]) for r in out["relations"]}
    assert pairs and all(h != t for h, _, t in pairs)
    assert ("FlowNet", "USED_FOR", "optical flow estimation") in pairs


def test_relation_ceiling_corrects_each_kind_of_entity_error_alone() -> None:
    """scripts/relation_ceiling.py --own --fix: each kind of error corrected from the gold, the others left."""
    from kg.extract.rules import Candidate
    from kg_train.relation_ceiling import corrected

    text = "We propose FlowNet for optical flow. Extensive experiments on Sintel."
    row = {"entities": [{"text": "FlowNet", "type": "model", "aliases": [], "proposed": True},
                        {"text": "optical flow", "type": "task", "aliases": []},
                        {"text": "Sintel", "type": "dataset", "aliases": []}]}
    own = [Candidate(11, 18, "method", 0), Candidate(23, 35, "method", 0), Candidate(37, 58, "concept", 0)]
    assert [text[c.start:c.end] for c in own] == ["FlowNet", "optical flow", "Extensive experiments"]

    def show(fixes: set[str]) -> list[tuple[str, str, bool]]:
        ch, prop = corrected(text, row, own, {1}, fixes)
        return [(text[c.start:c.end], c.type, j in prop) for j, c in enumerate(ch)]

    assert show(set()) == [("FlowNet", "method", False), ("optical flow", "method", True),
                           ("Extensive experiments", "concept", False)]
    assert show({"spurious"}) == [("FlowNet", "method", False), ("optical flow", "method", True)]
    assert show({"missed"})[-1] == ("Sintel", "dataset", False) and len(show({"missed"})) == 4
    assert show({"types"})[:2] == [("FlowNet", "model", False), ("optical flow", "task", True)]
    assert show({"proposed"}) == [("FlowNet", "method", True), ("optical flow", "method", False),
                                  ("Extensive experiments", "concept", False)]
    assert [c.type for c in own] == ["method", "method", "concept"]  # the extractor's own mentions untouched


def test_relation_ceiling_own_mentions_give_the_extractors_relations(extractor) -> None:
    """--own without fixes: the relation steps see what they see at run time, so the relations are the
    extraction's own."""
    from kg_train.relation_ceiling import own_mention_rows

    text = ("We propose FlowNet, a model for optical flow estimation. FlowNet outperforms PWC-Net on the Sintel "
            "benchmark.")
    row = {"id": "x", "text": text, "entities": [], "relations": []}
    (out,) = own_mention_rows(extractor, [row])
    x = extractor.extract(text)
    want = {(x.entities[r.head].text, r.type, x.entities[r.tail].text) for r in x.relations}
    ents = out["entities"]
    assert want and {(ents[r["head"]]["text"], r["type"], ents[r["tail"]]["text"]) for r in out["relations"]} == want
    (empty,) = own_mention_rows(extractor, [{"id": "y", "text": "", "entities": []}])
    assert empty == {"id": "y", "entities": [], "relations": []}
    assert "_relations" not in vars(extractor)
