"""Abbreviation detection and canonical keys."""

from kg.canon import canonical_key, entity_id
from kg.extract.abbrev import find_abbreviations


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.short, a.long) for a in find_abbreviations(text)]


def test_long_form_then_short_form() -> None:
    assert pairs("We estimate mutual information (MI) between inputs.") == [("MI", "mutual information")]
    assert pairs("the Straight-Through Estimator (STE) is used") == [("STE", "Straight-Through Estimator")]


def test_plural_digit_and_hyphen_short_forms() -> None:
    assert pairs("Large language models (LLMs) are big.") == [("LLMs", "Large language models")]
    assert pairs("we propose Learning to Think (L2T), an approach") == [("L2T", "Learning to Think")]
    assert pairs("Conditional Pointwise Mutual Information (C-PMI) helps") == [
        ("C-PMI", "Conditional Pointwise Mutual Information")]


def test_short_form_then_long_form() -> None:
    assert pairs("We bound the MI (mutual information) of codes.") == [("MI", "mutual information")]


def test_offsets_locate_both_forms() -> None:
    text = "Recently, diffusion language models (DLMs) emerged."
    (a,) = find_abbreviations(text)
    assert text[a.short_start : a.short_end] == "DLMs"
    assert text[a.long_start : a.long_end] == "diffusion language models"


def test_glosses_are_not_abbreviations() -> None:
    assert pairs("a model (see below) and results (in this paper)") == []


def test_variants_share_one_key() -> None:
    assert canonical_key("LLMs") == canonical_key("LLM") == "llm"
    assert canonical_key("large language models") == canonical_key("Large Language Model")
    assert canonical_key("Straight-Through Estimator") == canonical_key("straight through estimators")
    assert canonical_key("CIFAR-10") == canonical_key("cifar 10")
    assert canonical_key("dynamics") == "dynamics" and canonical_key("analyses") == "analysis"


def test_entity_ids_are_url_safe_and_stable() -> None:
    assert entity_id(canonical_key("Mutual Information")) == "mutual-information"
    assert entity_id("c++") == entity_id("c++") and "/" not in entity_id("tcp/ip")
