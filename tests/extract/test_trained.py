"""The shipped trained pipeline (kg/extract/model/) loads offline by path and extracts typed entities and relations."""

from __future__ import annotations

import pytest

from kg.extract.lexicon import ENTITY_TYPES
from kg.extract.pipeline import MODEL_DIR, RULES_MODEL, Extractor, ExtractorConfig, load_nlp
from kg.extract.titlename import title_mentions
from kg.extract.types import RELATION_TYPES

pytestmark = pytest.mark.skipif(not (MODEL_DIR / "meta.json").exists(), reason="no trained model shipped")


@pytest.fixture(scope="module")
def trained() -> Extractor:
    return Extractor(load_nlp(str(MODEL_DIR)))


def test_model_is_small_and_complete() -> None:
    size = sum(f.stat().st_size for f in MODEL_DIR.rglob("*") if f.is_file())
    assert size < 25_000_000
    assert (MODEL_DIR / "relations.json").exists()


def test_loads_by_path_with_a_scientific_ner(trained: Extractor) -> None:
    assert trained.trained and trained.relmodel is not None
    assert set(trained.nlp.get_pipe("ner").labels) <= set(ENTITY_TYPES)
    assert {"tagger", "parser", "ner"} <= set(trained.nlp.pipe_names)


def test_extracts_typed_entities_and_relations(trained: Extractor) -> None:
    text = ("We propose a convolutional neural network for semantic segmentation. "
            "Our model outperforms U-Net on the Cityscapes dataset in mean IoU.")
    x = trained.extract(text)
    got = {m.text: m.type for m in x.entities}
    assert got.get("semantic segmentation") == "task"
    assert got.get("Cityscapes") == "dataset"
    assert any(t in ("method", "model") for t in got.values())
    for m in x.entities:
        assert text[m.start : m.end] == m.text and m.type in ENTITY_TYPES
    assert x.relations
    for r in x.relations:
        assert r.type in RELATION_TYPES and r.head != r.tail


def test_default_extractor_is_the_trained_one() -> None:
    from kg.extract import pipeline

    assert str(MODEL_DIR) == pipeline.DEFAULT_MODEL
    assert pipeline.EXTRACTOR_VERSION == pipeline.TRAINED_VERSION
    assert not Extractor(load_nlp(RULES_MODEL)).trained


def test_without_the_rule_layer_entities_are_the_ner_spans(trained: Extractor) -> None:
    """`kg eval`'s "trained alone" column: the NER's own spans and the relation classifier, nothing added."""
    text = ("Large language models (LLMs) such as LLaDA-8B are evaluated on GSM8K. "
            "We propose CoolNet for image classification.")
    alone = Extractor(trained.nlp, config=ExtractorConfig(rule_layer=False))
    doc = trained.nlp(text)
    got = [(m.start, m.end, m.type) for m in alone.extract(text).entities]
    assert got == [(e.start_char, e.end_char, e.label_) for e in doc.ents]
    assert not any(m.proposed or m.short_form_of for m in alone.extract(text).entities)


def test_abbreviation_pair_takes_one_type(trained: Extractor) -> None:
    """Both forms of a pair get one type: a known concept's, or the NER's for either form."""
    x = trained.extract("We estimate mutual information (MI) with neural critics. MI is hard to bound.")
    got = [(m.text, m.type) for m in x.entities if m.text in ("mutual information", "MI")]
    assert got == [("mutual information", "concept"), ("MI", "concept"), ("MI", "concept")]
    x = trained.extract("We use Global Vectors for Word Representation (GloVe). GloVe is trained on Wikipedia.")
    types = {m.text: m.type for m in x.entities}
    assert types["Global Vectors for Word Representation"] == types["GloVe"] != "concept"


def test_links_are_not_entities(trained: Extractor) -> None:
    x = trained.extract("Code is at https://github.com/org/MI-Peaks and www.example.org/LLaDA-8B; we use BERT.")
    assert [m.text for m in x.entities] == ["BERT"]


def test_generic_phrases_formulas_links_and_references_are_not_entities(trained: Extractor) -> None:
    """What kg-gold's guideline leaves out never becomes a node."""
    for text in ("Extensive experiments show that our method outperforms existing approaches in real-world "
                 "applications.", "The bound is O(1) when alpha > 0, see https://github.com/org/repo and Sec. 3."):
        assert trained.extract(text).entities == []


def test_broad_fields_and_their_short_forms_are_not_entities(trained: Extractor) -> None:
    """The guideline leaves out broad fields (AI, NLP, computer vision, robotics), defined short forms included."""
    x = trained.extract("Advances in natural language processing (NLP) and computer vision (CV) have reshaped "
                        "artificial intelligence (AI) and robotics. We fine-tune BERT for question answering.")
    names = {m.text for m in x.entities}
    assert not names & {"natural language processing", "NLP", "computer vision", "CV", "artificial intelligence",
                        "AI", "robotics"}
    assert "BERT" in names
    keep = Extractor(trained.nlp, config=ExtractorConfig(drop_fields=False))
    assert {m.text for m in keep.extract("Advances in computer vision (CV) have reshaped robotics.").entities}


def test_a_known_name_keeps_its_type_whatever_the_ner_says(trained: Extractor) -> None:
    x = trained.extract("Experiments on GTZAN, ESC-50 and FFHQ show that the model generalises.")
    got = {m.text: m.type for m in x.entities}
    assert got.get("FFHQ") == "dataset"
    assert all(t == "dataset" for n, t in got.items() if n in ("GTZAN", "ESC-50", "FFHQ"))


def test_a_named_contribution_is_proposed_and_linked(trained: Extractor) -> None:
    x = trained.extract("We propose HawkNet, a novel framework for anomaly detection, and evaluate it on the "
                        "MVTec AD benchmark.")
    got = {m.text: (m.type, m.proposed) for m in x.entities}
    assert got == {"HawkNet": ("method", True), "anomaly detection": ("task", False), "MVTec AD": ("dataset", False)}
    rels = {(x.entities[r.head].text, r.type, x.entities[r.tail].text) for r in x.relations}
    assert ("HawkNet", "EVALUATED_ON", "MVTec AD") in rels


def test_a_type_word_after_a_name_types_the_name(trained: Extractor) -> None:
    """The type word goes and types the name, so that "the ZQA-9K dataset" is one node with the ZQA-9K of other
    papers (names the lexicon does not know, all capitals or not)."""
    x = trained.extract("We evaluate the FooNet18 models and the QRX models on the ZQA-9K dataset.")
    got = {m.text: m.type for m in x.entities}
    assert got["ZQA-9K"] == "dataset"
    assert got["FooNet18"] == got["QRX"] == "model"
    # "image datasets" is generic data, no dataset (kg-gold's guideline)
    x = trained.extract("Large language models are trained on image datasets.")
    assert [(m.text, m.type) for m in x.entities] == [("Large language models", "model")]


def test_a_defined_abbreviation_is_typed_by_its_long_form(trained: Extractor) -> None:
    """EM is also exact match, a known metric; defined as Expectation-Maximization it is a method."""
    x = trained.extract("We fit the model with the Expectation-Maximization (EM) algorithm. EM converges fast.")
    assert {m.type for m in x.entities if m.text == "EM"} == {"method"}
    x = trained.extract("We report exact match (EM) and F1 on SQuAD. EM improves by 3 points.")
    assert {m.type for m in x.entities if m.text == "EM"} == {"metric"}


def test_a_bare_undefined_acronym_is_not_taken_by_shape_alone(trained: Extractor) -> None:
    """Names are found ("LLaDA-8B", "LSTM"), bare capitals like "SOTA" or "RGB" are not."""
    x = trained.extract("This beats SOTA by 3 points, and our method is SOTA while LLaDA-8B stays behind.")
    got = {m.text for m in x.entities}
    assert "SOTA" not in got and "LLaDA-8B" in got
    x = trained.extract("LSTM beats SOTA and RGB, and LLaDA-8B beats LSTM.")
    assert [m.text for m in x.entities] == ["LSTM", "LLaDA-8B", "LSTM"]
    assert all(x.entities[r.head].text != x.entities[r.tail].text for r in x.relations)  # no LSTM -> LSTM


def test_a_metric_is_the_measure_without_its_qualifier(trained: Extractor) -> None:
    """kg-gold's guideline: "QoS estimation accuracy" -> accuracy, "F1 score" -> F1."""
    x = trained.extract("We report QoS estimation accuracy and the F1 score on SQuAD.")
    got = {m.text: m.type for m in x.entities}
    assert got.get("accuracy") == got.get("F1") == "metric" and got.get("SQuAD") == "dataset"


def test_title_name_is_the_short_name_before_a_colon() -> None:
    from kg.extract.titlename import title_name

    assert title_name("Gaia2: Benchmarking LLM Agents on Dynamic Environments") == "Gaia2"
    assert title_name("LoRA in LoRA: Nested Adapters") == "LoRA in LoRA"
    assert title_name("CALM : A Multi-task Benchmark") == "CALM"
    assert title_name("Survey: Graph Neural Networks") is None  # a genre word
    assert title_name("Beyond the obvious: a study") is None  # no capital after the first letter, no digit
    assert title_name("A Very Long Phrase Of Many Words: Subtitle") is None
    assert title_name("No colon here") is None
    assert title_name("Large Language Models: A Survey") is None  # a topic, not a contribution
    assert title_name("Part 1: Introduction") is None
    assert title_name("ChatGPT: Jack of all Trades") is None  # a known name is the topic


def test_a_title_name_is_the_papers_contribution(trained: Extractor) -> None:
    text = ("Agents are evaluated with GPT-4 on long tasks. Zorblax pairs every scenario with a verifier, and "
            "GPT-4 solves few of its tasks.")
    plain = trained.extract(text)
    assert "Zorblax" not in {m.text for m in plain.entities}  # the NER passes it over
    titled = next(trained.extract_many([text], ["Zorblax: Benchmarking Agents in Asynchronous Worlds"]))
    assert [(m.text, m.type) for m in titled.entities if m.proposed] == [("Zorblax", "dataset")]
    # a survey of a topic proposes nothing; a name counts only as the abstract writes it
    for title in ("Zorblax: A Survey", "Long Tasks: A Formulation"):
        out = next(trained.extract_many([text], [title]))
        assert [(m.text, m.proposed) for m in out.entities] == [(m.text, m.proposed) for m in plain.entities]
    with pytest.raises(ValueError):  # titles must line up with the texts
        list(trained.extract_many([text, text], ["Zorblax: x"]))


def test_a_title_name_the_ner_missed_becomes_a_mention() -> None:
    from kg.extract.rules import Candidate

    text = "We release Gaia2 and evaluate GPT-5 on Gaia2-mini and the Gaia2 suite."
    gpt = Candidate(text.index("GPT-5"), text.index("GPT-5") + 5, "model", 5)
    suite = Candidate(text.rindex("Gaia2"), text.rindex("Gaia2") + 11, "dataset", 5)
    out = title_mentions([gpt, suite], text, "Gaia2", "Gaia2: Benchmarking LLM Agents")
    # whole words only ("Gaia2-mini" is another name), and none inside a mention ("Gaia2 suite")
    assert [(text[c.start : c.end], c.type) for c in out] == [("Gaia2", "dataset"), ("GPT-5", "model"),
                                                              ("Gaia2 suite", "dataset")]


def test_a_known_name_in_a_title_is_the_topic_and_only_the_subtitle_makes_a_benchmark(trained: Extractor) -> None:
    text = "Federated Learning trains models across clients. We review Federated Learning for healthcare."
    plain = trained.extract(text)
    titled = next(trained.extract_many([text], ["Federated Learning: Challenges and Opportunities"]))
    assert [(m.text, m.proposed) for m in titled.entities] == [(m.text, m.proposed) for m in plain.entities]
    t = "We train Zorbl fast."
    typed = {title: title_mentions([], t, "Zorbl", title)[0].type
             for title in ("Zorbl: Faster Training on Reasoning Benchmarks", "Zorbl: A Benchmark for Agents")}
    assert typed == {"Zorbl: Faster Training on Reasoning Benchmarks": "method",
                     "Zorbl: A Benchmark for Agents": "dataset"}
