"""Cleaning LaTeX, markdown and odd Unicode while every kept character maps back to the original."""

from hypothesis import given
from hypothesis import strategies as st

from kg.clean import clean_text


def test_latex_markdown_and_hyphens_are_cleaned() -> None:
    src = r"We use $R_t(\epsilon)$ and \textit{Straight-Through} est~(STE) --- **M**ild {\sc Turbo} a‑b *emph*"
    c = clean_text(src)
    assert c.text == "We use R_t(epsilon) and Straight-Through est (STE) — Mild Turbo a-b emph"


def test_offsets_point_into_the_original() -> None:
    src = r"The \textbf{CIFAR-10} dataset~(see \url{x}) and **LLaDA-8B**."
    c = clean_text(src)
    for word in ("CIFAR-10", "LLaDA-8B", "dataset"):
        i = c.text.index(word)
        s, e = c.span_to_original(i, i + len(word))
        assert src[s:e] == word


def test_zero_width_bidi_and_control_characters_are_dropped() -> None:
    c = clean_text("a\u200bb \u202eevil\u202c\x00 c\u00a0d")
    assert c.text == "ab evil c d"


def test_unclosed_latex_does_not_crash() -> None:
    c = clean_text(r"broken \textit{never closed and $x = 1")
    assert "never closed" in c.text


@given(st.text(alphabet=st.sampled_from(list("ab $\\{}~*_-—\u2011\u200b xyz(MI)")), max_size=60))
def test_every_cleaned_character_comes_from_the_original(src: str) -> None:
    c = clean_text(src)
    assert len(c.offsets) == len(c.text) + 1
    assert list(c.offsets[:-1]) == sorted(set(c.offsets[:-1]))  # strictly increasing
    for ch, o in zip(c.text, c.offsets, strict=False):
        # Kept characters are the original or one of the documented substitutions.
        assert ch == src[o] or ch in " -—–"
