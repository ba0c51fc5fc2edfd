"""Clean LaTeX, markdown and odd Unicode out of abstracts while keeping a map back to the original offsets."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Commands whose braced argument is text to keep: \textit{X} -> X.
_WRAP_CMD = re.compile(
    r"\\(?:text(?:it|bf|tt|sc|rm|sf|up|normal)?|emph|underline|mathrm|mathbf|mathit|mathsf|mathtt|"
    r"mathcal|mathbb|mathfrak|boldsymbol|operatorname|url|href|cite[tp]?|ref|mbox|hbox)\s*\{"
)
# Old-style font switches: {\sc X} -> X.
_FONT_SWITCH = re.compile(r"\{\\(?:sc|em|it|bf|tt|rm|sl|sf)\s+")
_OTHER_CMD = re.compile(r"\\([A-Za-z]+)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_DASHES = re.compile(r"-{2,3}")

_HYPHENS = dict.fromkeys("\u2010\u2011\u2012\u2043\ufe63\uff0d", "-") | {"\u2212": "-"}
_SPACES = dict.fromkeys(
    "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\t\r\n", " ")
# Zero-width, bidi controls and soft hyphens carry no text.
_DROP = set("\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SPECIAL = re.compile("[" + re.escape("\\{}$~" + "".join(_HYPHENS) + "".join(_SPACES) + "".join(_DROP))
                      + "\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class CleanText:
    """Cleaned text plus, for each of its characters, the offset of the original character it came from."""

    text: str
    offsets: tuple[int, ...]  # len(text) + 1 entries; the last is len(original)

    def span_to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map a cleaned [start, end) span to the original text's [start, end)."""
        if end <= start:
            o = self.offsets[start]
            return o, o
        return self.offsets[start], self.offsets[end - 1] + 1


def _matching_brace(text: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, min(len(text), open_at + 2000)):
        c = text[i]
        if c == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif c == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return i
    return None


def clean_text(original: str) -> CleanText:
    """Return the analysable version of ``original`` with an offset map back into it.

    Every transformation deletes characters or replaces one character by another, so each kept
    character still knows where it came from; evidence offsets therefore point into the original.
    """
    n = len(original)
    drop = bytearray(n)
    sub: dict[int, str] = {}

    for m in _WRAP_CMD.finditer(original):
        close = _matching_brace(original, m.end() - 1)
        if close is None:
            continue
        drop[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        drop[close] = 1
    for m in _FONT_SWITCH.finditer(original):
        close = _matching_brace(original, m.start())
        if close is None:
            continue
        drop[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        drop[close] = 1
    for m in _OTHER_CMD.finditer(original):
        if not drop[m.start()]:
            drop[m.start()] = 1  # keep the command's name (\alpha -> alpha)
    for m in _SPECIAL.finditer(original):  # the characters the branches below act on, not every character
        i = m.start()
        c = original[i]
        if c == "\\":
            if i + 1 < n and not original[i + 1].isalpha():
                drop[i] = 1
                if original[i + 1] in ",;: ":
                    sub[i + 1] = " "
        elif c in "{}$":
            if i == 0 or original[i - 1] != "\\":
                drop[i] = 1
        elif c == "~":
            sub[i] = " "
        elif c in _HYPHENS:
            sub[i] = _HYPHENS[c]
        elif c in _SPACES:
            sub[i] = " "
        else:  # in _DROP, a control character or DEL
            drop[i] = 1
    for m in _BOLD.finditer(original):
        for i in (*range(m.start(), m.start(2)), *range(m.end(2), m.end())):
            drop[i] = 1
    for m in _ITALIC.finditer(original):
        drop[m.start()] = 1
        drop[m.end() - 1] = 1
    for m in _DASHES.finditer(original):
        sub[m.start()] = "\u2014" if m.end() - m.start() == 3 else "\u2013"
        for i in range(m.start() + 1, m.end()):
            drop[i] = 1

    chars: list[str] = []
    offsets: list[int] = []
    prev_space = True  # also strips leading whitespace
    for i, c in enumerate(original):
        if drop[i]:
            continue
        c = sub.get(i, c)
        if c == " ":
            if prev_space:
                continue
            prev_space = True
        else:
            prev_space = False
        chars.append(c)
        offsets.append(i)
    while chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    offsets.append(n)
    return CleanText("".join(chars), tuple(offsets))


_STRAY_EMPHASIS = re.compile(r"\*{2,}|(?<=\w)\*(?=\w)")


def plain_name(text: str) -> str:
    """A mention's text as a name: Markdown emphasis gone ("d**i**ffusion" -> "diffusion", "LL**M**-based" ->
    "LLM-based", a cut "**GPT" -> "GPT") and whitespace single; text without emphasis comes back as it is."""
    if "*" in text:
        text = _STRAY_EMPHASIS.sub("", clean_text(text).text)
    return " ".join(text.split())
