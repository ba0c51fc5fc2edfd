"""Display titles for papers that have none: a short, distinct label from the abstract, the one the API, the views
and the CLI show (it is stored as the Paper's ``title``)."""

from __future__ import annotations

import re

from kg.clean import clean_text
from kg.extract.types import Extraction

LIMIT = 60  # characters, ellipsis included; long enough to tell papers apart, short enough for a list
LONG_LIMIT = 110  # tried when the short label is already another paper's

_VERBS = (r"propose[sd]?|introduce[sd]?|present[sd]?|develop(?:s|ed)?|stud(?:y|ies|ied)|investigate[sd]?|"
          r"address(?:es|ed)?|consider(?:s|ed)?|analy[sz]e[sd]?|examine[sd]?|explore[sd]?|tackle[sd]?|revisit(?:s|ed)?|"
          r"formulate[sd]?|establish(?:es|ed)?|characteri[sz]e[sd]?|design(?:s|ed)?|focus(?:es|ed)? on|put forward")
# "We study X", "In this paper, we propose X", "This work introduces X": X says what the paper is about.
_WE_VERB = re.compile(
    r"\b(?:we|this (?:paper|work|study|article)|our (?:work|paper))\s+(?:(?:first|also|then|further|here|"
    r"formally|systematically|theoretically|empirically)\s+)?(?:" + _VERBS + r")\s+(?P<obj>[^.;:]+)", re.I)
_OBJ_LEAD = re.compile(r"^(?:(?:the|a|an)\s+(?:(?:fundamental|open|important|classical|general)\s+)?"
                       r"(?:problem|question|task|challenge|issue)s?\s+of\s+|(?:a|an|the)\s+|how\s+to\s+)", re.I)
_ADJ_LEAD = re.compile(r"^(?:novel|new|simple|general|unified|principled|efficient|first)\s+(?:and\s+\w+\s+)?", re.I)
_OBJ_END = re.compile(r",\s*(?:which|that|where|while|whereby|and\s+(?:show|demonstrate|prove|find))\b|"
                      r"\s+(?:that|which)\s+(?:is|are|can|could|achieves?|outperforms?|enables?|allows?)\b", re.I)
_SENT_LEAD = re.compile(r"^(?:(?:in|within)\s+(?:this|the present)\s+(?:paper|work|study)|here|recently|"
                        r"in recent years|to this end|however|moreover)\s*,?\s*", re.I)
_DESCRIPTION = re.compile(r"\s*[,:(]\s*((?:a|an|the)\s+[^.;()]{10,})")
_BACK_REFERENCE = re.compile(r"^(?:this|these|that|those|such|it|them|its|their|both|each)\b", re.I)
_TAIL_WORDS = {"a", "an", "the", "of", "for", "and", "or", "in", "on", "to", "with", "by", "from", "via", "as",
               "that", "which", "is", "are", "its", "their", "our", "at"}


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary with an ellipsis, no dangling "of the"."""
    s = " ".join(clean_text(text).text.split()).strip(" .,;:")
    if len(s) <= limit:
        return s
    words = s[: limit - 1].split(" ")
    if len(words) > 1:
        words = words[:-1]  # the last word may be cut in half
    while len(words) > 1 and (words[-1].casefold() in _TAIL_WORDS or not words[-1].strip(".,;:(")):
        words.pop()
    return " ".join(words).rstrip(" .,;:(-–") + "…"


def _phrase(sentence: str) -> str | None:
    """What "we study/propose/..." says the paper is about, capitalised; None when the sentence says no such thing."""
    m = _WE_VERB.search(clean_text(sentence).text)
    if not m:
        return None
    obj = m.group("obj")
    if _BACK_REFERENCE.match(obj):  # "we study this question": about the sentence before, not the paper
        return None
    obj = _OBJ_END.split(obj, maxsplit=1)[0]
    for _ in range(2):
        obj = _ADJ_LEAD.sub("", _OBJ_LEAD.sub("", obj.strip()))
    if len(obj.split()) < 3:
        return None
    return obj[:1].upper() + obj[1:]


def display_title(abstract: str, ext: Extraction, limit: int = LIMIT) -> str:
    """The label of a paper without a title: its named contribution with its description (``H-SPLID: a novel
    algorithm for ...``), else what its first sentences say it does (``Training neural networks with quantized
    parameters``), else its first sentence; about ``limit`` characters."""
    sents = ext.sentences or [(0, len(abstract))]
    named = [m for m in ext.entities if m.proposed and any(c.isupper() for c in m.text)]
    if named:
        m = named[0]
        s_end = sents[m.sent][1] if m.sent < len(sents) else len(abstract)
        g = _DESCRIPTION.match(abstract[m.end : s_end])
        if g:
            return shorten(f"{m.text}: {g.group(1)}", limit)
    for s, e in sents[:3]:
        phrase = _phrase(abstract[s:e])
        if phrase:
            return shorten(phrase, limit)
    first = _SENT_LEAD.sub("", clean_text(abstract[sents[0][0] : sents[0][1]]).text.strip())
    return shorten(first[:1].upper() + first[1:], limit)


class TitleBook:
    """Hands out display titles that no other paper of the graph has (case-insensitively): a label already taken
    is tried at LONG_LIMIT, then given the paper's id."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def take(self, title: str) -> str:
        self.taken.add(title.casefold())
        return title

    def label(self, paper_id: str, abstract: str, ext: Extraction) -> str:
        short = display_title(abstract, ext)
        if short.casefold() not in self.taken:
            return self.take(short)
        longer = display_title(abstract, ext, LONG_LIMIT)
        if longer.casefold() not in self.taken:
            return self.take(longer)
        return self.take(f"{short} ({paper_id})")
