"""Schwartz–Hearst abbreviation detection ("long form (SHORT)" and "SHORT (long form)") on plain text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_PAREN = re.compile(r"\(([^()]{1,80})\)")
_WORD = re.compile(r"\S+")
_DIGIT_WORDS = {"2": ("to", "two"), "4": ("for", "four"), "3": ("three",), "1": ("one",)}


@dataclass(frozen=True, slots=True)
class Abbreviation:
    """A definition found in text: offsets are into the text that was scanned."""

    short: str
    short_start: int
    long: str
    long_start: int

    @property
    def short_end(self) -> int:
        return self.short_start + len(self.short)

    @property
    def long_end(self) -> int:
        return self.long_start + len(self.long)


def _is_short_form(s: str) -> bool:
    if not 2 <= len(s) <= 12 or len(s.split()) > 2:
        return False
    if not s[0].isalnum() or not any(c.isalpha() for c in s):
        return False
    # Short forms are written with capitals somewhere ("MI", "LLMs", "t-SNE"); plain words are glosses.
    return any(c.isupper() for c in s)


_WORD_START = re.compile(r"(?<![^\s\-\u2010\u2011/])[^\W_]")


def _initials(short: str, long: str) -> int | None:
    """Where the long form starts when the letters of ``short`` are initials of its words, matched from the end
    (``PPO``: *P*roximal *P*olicy *O*ptimization, not the *p* inside "optimization"); None otherwise."""
    s_chars = _spelled(short, str.isalpha)
    if len(s_chars) < 2 or any(c.isdigit() for c in short):
        return None
    caps = [c.lower() for c in short.rstrip("s") if c.isupper()]
    if short[0].isupper() and len(caps) >= 2 and len(caps) < len(s_chars):
        # "LoRA": Low-Rank Adaptation, "SQuAD", "IoU": the capitals are the initials, the small letters fill in
        # (not "mAP", whose small m is mean's)
        at = _initials_of(caps, long)
        if at is not None:
            return at
    return _initials_of(s_chars, long)


def _initials_of(s_chars: list[str], long: str) -> int | None:
    starts = [(m.start(), m.group().lower()) for m in _WORD_START.finditer(long)]
    i = len(starts) - 1
    if not starts or starts[-1][1] != s_chars[-1]:
        return None  # the last letter starts the last word ("... Optimization")
    for c in reversed(s_chars):
        while i >= 0 and starts[i][1] != c:
            i -= 1
        if i < 0:
            return None
        at = starts[i][0]
        i -= 1
    return at


def _spelled(short: str, keep: Callable[[str], bool]) -> list[str]:
    """The lower-case characters of ``short`` its long form spells (those ``keep`` accepts); a plural short form
    ("LLMs") does not spell an extra "s"."""
    chars = [c.lower() for c in short if keep(c)]
    if len(chars) > 2 and short.endswith("s") and short[-2].isupper():
        chars.pop()
    return chars


def _best_long_form(short: str, long: str) -> int | None:
    """Index in ``long`` where the long form starts, or None: the words' initials when they spell the short form,
    else the Schwartz–Hearst backward match; extended back to the start of the word the first letter sits in,
    across a hyphen ("SSL" of "self-supervised learning" is not "supervised learning", "MLLM" of "Multi-modal
    Large Language Model" not "modal ...")."""
    at = _initials(short, long)
    if at is None:
        at = _schwartz_hearst(short, long)
        if at is None:
            return None
    while at > 0 and (long[at - 1].isalnum()
                      or (long[at - 1] in "-\u2010\u2011" and at > 1 and long[at - 2].isalnum())):
        at -= 1
    return at


def _schwartz_hearst(short: str, long: str) -> int | None:
    """Index in ``long`` of the short form's first letter, or None (the Schwartz–Hearst backward match)."""
    s_chars = _spelled(short, str.isalnum)
    l_index = len(long) - 1
    lower = long.lower()
    for s_index in range(len(s_chars) - 1, -1, -1):
        c = s_chars[s_index]
        if c in _DIGIT_WORDS and s_index > 0:
            # "L2T" = "Learning to Think": a digit may stand for a word.
            found = -1
            for word in _DIGIT_WORDS[c]:
                j = lower.rfind(" " + word + " ", 0, l_index + 2)
                if j >= 0:
                    found = max(found, j + 1)
            if found >= 0:
                l_index = found - 1
                continue
        while l_index >= 0:
            ch = lower[l_index]
            at_word_start = l_index == 0 or not long[l_index - 1].isalnum()
            if ch == c and (s_index > 0 or at_word_start):
                break
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
    return l_index + 1


def find_abbreviations(text: str) -> Iterator[Abbreviation]:
    """Yield abbreviation definitions in ``text``, in order of appearance."""
    for m in _PAREN.finditer(text):
        inner = m.group(1)
        # "(MI; Shannon 1948)" or "(MI, for short)": the short form is the first part.
        first = re.split(r"[;,]\s", inner, maxsplit=1)[0].strip()
        first = first.strip("*_ ")
        before = text[max(0, m.start() - 300) : m.start()]
        sent_break = max(before.rfind(". "), before.rfind("; "), before.rfind(": "), before.rfind("? "))
        if sent_break >= 0:
            before = before[sent_break + 2 :]
        base = m.start() - len(before)
        if _is_short_form(first):
            words = list(_WORD.finditer(before))
            n_words = min(len(first) + 5, len(first) * 2)
            words = words[-n_words:]
            if not words:
                continue
            window_start = words[0].start()
            window = before[window_start:].rstrip()
            window = window.rstrip(",:*_ ")
            idx = _best_long_form(first, window)
            if idx is None:
                continue
            long = window[idx:].strip().strip("*_")
            if len(long) <= len(first) or first.lower() in long.lower().split():
                continue
            if "(" in long or ")" in long or len(long.split()) > 10:
                continue
            short_start = m.start(1) + inner.index(first)
            long_start = base + window_start + idx + (len(window[idx:]) - len(window[idx:].lstrip()))
            if text[long_start] in "*_":
                long_start += 1
            yield Abbreviation(first, short_start, long, long_start)
        elif len(inner.split()) >= 2:
            # "MI (mutual information)": the word before the parenthesis is the short form.
            w = re.search(r"(\S+)\s*$", before)
            if not w:
                continue
            cand = w.group(1).strip(",*_")
            if not _is_short_form(cand):
                continue
            long = inner.strip()
            if _best_long_form(cand, long) != 0:
                continue
            yield Abbreviation(cand, base + w.start(1), long, m.start(1) + (len(inner) - len(inner.lstrip())))
