"""The learned second stage: the span filter (spans.json) and the cross-sentence relation model (docrel.json)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import spacy

from kg.extract.docrel import NONE, DocRelationModel, add_doc_relations, candidate_pairs, entities
from kg.extract.pipeline import MODEL_DIR, RULES_MODEL, Extractor, load_nlp
from kg.extract.spanfilter import SpanFilter, span_features
from kg_train.spans import gold_examples


@dataclass
class Span:
    start: int
    end: int
    type: str


LABELS = ["concept", "dataset", "method", "none"]


def _filter(weights: dict[str, list[float]]) -> SpanFilter:
    return SpanFilter({"labels": LABELS, "bias": [0.0] * 4, "weights": weights, "drop": 0.6, "retype": 0.5})


def test_span_filter_drops_retypes_and_keeps_one_decision_per_name() -> None:
    nlp = spacy.blank("en")
    text = "We test on Fisher and ImageNet; Fisher again; and BERT."
    doc = nlp(text)
    f = _filter({"W=fisher": [0, 0, 0, 5.0], "W=imagenet": [0, 5.0, 0, 0]})
    spans = [Span(text.index("Fisher"), text.index("Fisher") + 6, "dataset"),
             Span(text.index("ImageNet"), text.index("ImageNet") + 8, "method"),
             Span(text.rindex("Fisher"), text.rindex("Fisher") + 6, "dataset"),
             Span(text.index("BERT"), text.index("BERT") + 4, "model")]
    keys = ["fisher", "imagenet", "fisher", "bert"]
    kept = f.apply(doc, spans, keys)
    # Fisher goes (both mentions), ImageNet becomes a dataset, BERT (nothing known) keeps the NER's type
    assert [(text[c.start : c.end], c.type) for c in kept] == [("ImageNet", "dataset"), ("BERT", "model")]
    # with retyping off it only drops: ImageNet keeps the NER's type
    f.retype = None
    spans[1].type = "method"
    kept = f.apply(doc, spans, keys)
    assert [(text[c.start : c.end], c.type) for c in kept] == [("ImageNet", "method"), ("BERT", "model")]


def test_span_features_see_the_words_around() -> None:
    doc = spacy.blank("en")("results on the ImageNet-1k benchmark")
    s = doc.text.index("ImageNet")
    feats = span_features(doc, s, s + 11)
    assert {"W=imagenet-1k", "P1=the", "P2=on", "N1=benchmark", "S0=AaAa-0"} <= set(feats)


def test_gold_examples_label_other_spans_none_unless_a_gold_name() -> None:
    doc = load_nlp(RULES_MODEL)("We train BERT on the GLUE benchmark with a new loss.")
    s = doc.text.index("BERT")
    ex = gold_examples(doc, [(s, s + 4, "model")], {"bert": "model", "glue": "dataset"}, str.lower)
    got = {next(f[2:] for f in fs if f.startswith("K=")): lab for fs, lab in ex}
    assert got == {"bert": "model", "glue benchmark": "none", "new loss": "none"}


def _doc_model(weights: dict[str, list[float]]) -> DocRelationModel:
    return DocRelationModel({"labels": ["EVALUATED_ON>", NONE, "USED_FOR>"], "bias": [0.0, 2.0, 0.0],
                             "weights": weights, "none_max": 0.5})


def test_doc_relations_join_a_proposed_entity_to_others_across_sentences() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    text = "We propose CoolNet. It beats BERT. Results on GLUE are strong."
    doc = nlp(text)

    def at(w: str, ty: str) -> tuple[int, int, str, str]:
        i = text.index(w)
        return i, i + len(w), ty, w.lower()

    spans = [at("CoolNet", "method"), at("BERT", "model"), at("GLUE", "dataset")]
    ents, of = entities(doc, [(*s, i == 0) for i, s in enumerate(spans)])
    assert of == [0, 1, 2] and [e.proposed for e in ents] == [True, False, False]
    assert candidate_pairs(ents) == [(0, 1), (0, 2)]  # only pairs with the proposed entity
    m = _doc_model({"T=method|dataset": [5.0, 0.0, 0.0]})
    assert m.predict(ents, [set()] * 3) == [(0, 2, "EVALUATED_ON")]
    # a pair already related (here by the sentence model) is not related again
    assert add_doc_relations(m, doc, spans, {0}, [(0, 2, "USED_FOR")]) == [(0, 2, "USED_FOR")]
    assert add_doc_relations(m, doc, spans, {0}, []) == [(0, 2, "EVALUATED_ON")]
    assert add_doc_relations(m, doc, spans, set(), []) == []  # nothing proposed, no pair


@pytest.mark.skipif(not (MODEL_DIR / "spans.json").exists(), reason="no trained model shipped")
def test_shipped_pipeline_uses_both_and_relates_across_sentences() -> None:
    ex = Extractor(load_nlp(str(MODEL_DIR)))
    assert ex.spanfilter is not None and ex.docrel is not None
    text = ("We propose CoolNet, a graph neural network for molecule property prediction. "
            "Experiments on the QM9 dataset show that CoolNet reduces the mean absolute error by 20%.")
    x = ex.extract(text)
    names = {m.text: m for m in x.entities}
    assert "CoolNet" in names and names["CoolNet"].proposed
    pairs = {(x.entities[r.head].text, x.entities[r.tail].text, r.type) for r in x.relations}
    assert any(h == "CoolNet" and x.entities[0].sent != names[t].sent for h, t, _ in pairs if t in names)
