"""Sentence boundaries: never after "et al." before a citation, "e.g.", "i.e.", "Fig."; still after a real end."""


def sentences(extractor, text: str) -> list[str]:
    return [text[s:e] for s, e in extractor.extract(text).sentences]


def test_abbreviations_do_not_end_sentences(extractor) -> None:
    text = ("The method gates the structure of linear operators introduced in Hernandez et al. [2023] that decode "
            "specific relational facts. Bounds were recently shown in Attias et al. (2024) to become vacuous. "
            "Prior work (e.g. LoRA, i.e. low-rank adapters) helps. As shown in Fig. 2, accuracy rises, cf. Tab. 3.")
    assert sentences(extractor, text) == [
        "The method gates the structure of linear operators introduced in Hernandez et al. [2023] that decode "
        "specific relational facts.",
        "Bounds were recently shown in Attias et al. (2024) to become vacuous.",
        "Prior work (e.g. LoRA, i.e. low-rank adapters) helps.",
        "As shown in Fig. 2, accuracy rises, cf. Tab. 3."]


def test_et_al_before_a_capital_may_still_end_one(extractor) -> None:
    assert sentences(extractor, "We compare with Zhang et al. They use GANs on CIFAR-10.") == [
        "We compare with Zhang et al.", "They use GANs on CIFAR-10."]
