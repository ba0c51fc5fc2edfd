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


def test_hyphen_space_and_joined_spellings_share_one_key() -> None:
    # a letter and a digit, as papers write model and dataset names
    assert canonical_key("GPT-4") == canonical_key("GPT 4") == canonical_key("GPT4") == "gpt4"
    assert canonical_key("CIFAR-10") == canonical_key("CIFAR10") == canonical_key("cifar 10")
    assert canonical_key("ResNet-50") == canonical_key("ResNet50") == canonical_key("ResNet 50")
    assert canonical_key("LLaMA--2") == canonical_key("Llama~2") == canonical_key("Llama 2") == "llama2"
    assert canonical_key("Llama-2-7B") == canonical_key("LLaMA2-7B") == canonical_key("Llama 2 7B") == "llama2 7b"
    assert canonical_key("3-D reconstruction") == canonical_key("3D reconstruction")
    # a lone leading letter, prefixes that are no words, compounds written either way
    assert canonical_key("U-Net") == canonical_key("UNet") and canonical_key("Faster R-CNN") == "faster rcnn"
    assert canonical_key("k-means") == canonical_key("kmeans") == canonical_key("k\u2013means") == "kmeans"
    assert canonical_key("Q-learning") == canonical_key("Q\u2013learning") == canonical_key("Qlearning")
    assert canonical_key("GPT\u22124") == canonical_key("GPT\u20144") == "gpt4"  # a minus sign, an em dash
    assert canonical_key("fine-tuning") == canonical_key("finetuning") == canonical_key("Fine tuning")
    assert canonical_key("pre-training") == canonical_key("pretraining") == canonical_key("pre training")
    assert canonical_key("multi-layer perceptrons") == canonical_key("multilayer perceptron")
    # accents, as typed, as TeX, as cleaned TeX
    assert (canonical_key("Fréchet Inception Distance") == canonical_key("Frechet inception distance")
            == canonical_key("Fr\\'echet Inception Distance") == canonical_key("Fr'echet Inception Distance"))


def test_joining_keeps_different_names_apart() -> None:
    assert len({canonical_key(n) for n in ("CIFAR-10", "CIFAR-100", "GPT-3", "GPT-3.5", "GPT-4", "GPT-4o")}) == 6
    assert canonical_key("ResNet-18/50") == "resnet18 50"  # two numbers stay two
    assert canonical_key("GPT-4 Turbo") == "gpt4 turbo"  # a word after a digit is a word
    assert canonical_key("pre- and post-processing") == "pre and post processing"
    assert canonical_key("CO problems") == "co problem" and canonical_key("RE models") == "re model"  # acronyms
    assert canonical_key("a model") == "a model" and canonical_key("I model") == "i model"  # words, not letters
    assert canonical_key("Q learning") == "q learning"  # a lone letter joins across a dash only
    # marks are dropped from Latin letters only: a kana's voicing mark is part of the letter
    assert canonical_key("\u30ac") != canonical_key("\u30ab")


def test_known_names_match_any_spelling() -> None:
    from kg.extract.rules import known_type, type_of

    assert known_type(canonical_key("GPT4")) == known_type(canonical_key("GPT-4")) == "model"
    assert known_type(canonical_key("CIFAR10")) == "dataset" and known_type(canonical_key("U-Net")) == "model"
    assert type_of("Gemini 1.5 Pro") == "model"  # a known family with its version joined on


def test_long_forms_are_read_from_word_initials_first() -> None:
    # not the "p" inside "optimization", not "supervised learning" or "modal ..." cut at a hyphen
    assert pairs("We train with Proximal Policy Optimization (PPO).") == [("PPO", "Proximal Policy Optimization")]
    assert pairs("Self-supervised learning (SSL) helps.") == [("SSL", "Self-supervised learning")]
    assert pairs("Multi-modal Large Language Models (MLLMs) see.") == [("MLLMs", "Multi-modal Large Language Models")]
    # capitals as initials, small letters filling in; a leading small letter is a word of its own
    assert pairs("a token-level approach based on Low-Rank Adaptation (LoRA)") == [("LoRA", "Low-Rank Adaptation")]
    assert pairs("the Stanford Question Answering Dataset (SQuAD)") == [
        ("SQuAD", "Stanford Question Answering Dataset")]
    assert pairs("its mean Average Precision (mAP) rises") == [("mAP", "mean Average Precision")]
    assert pairs("Intersection over Union (IoU) and Learning to Think (L2T)") == [
        ("IoU", "Intersection over Union"), ("L2T", "Learning to Think")]
