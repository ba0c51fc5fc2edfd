"""Keep sentences whole across "et al.", "e.g.", "i.e.", "Fig." and the like: marks set before the parser runs."""

from __future__ import annotations

from typing import Any

from spacy.language import Language

# Abbreviations that never end a sentence in an abstract: the next token always continues it.
ALWAYS = {"e.g", "i.e", "cf", "fig", "figs", "eq", "eqs", "tab", "sec", "vs", "approx", "resp", "w.r.t", "viz",
          "no", "ref", "refs", "ch", "app", "thm", "def", "prop"}
# Abbreviations that may end one ("... as in Smith et al. We then ..."): continued unless a capital follows.
USUALLY = {"al", "etc"}
NAME = "kg_abbreviations"


def _abbrev(doc: Any, i: int) -> tuple[str, int] | None:
    """(abbreviation without its period, index of the token after it) when a period at or after ``i`` ends one."""
    tok = doc[i]
    text = tok.lower_
    if text.endswith(".") and text[:-1] in ALWAYS | USUALLY and len(text) > 1:
        return text[:-1], i + 1
    if text in ALWAYS | USUALLY and i + 1 < len(doc) and doc[i + 1].text == ".":
        return text, i + 2
    return None


@Language.component(NAME)
def keep_abbreviations(doc: Any) -> Any:
    """Mark the token after such an abbreviation as no sentence start; the parser respects the mark."""
    for i in range(len(doc) - 1):
        found = _abbrev(doc, i)
        if found is None:
            continue
        abbr, nxt = found
        if nxt >= len(doc):
            continue
        if abbr == "al" and (i == 0 or doc[i - 1].lower_ != "et"):
            continue
        follower = doc[nxt].text
        if abbr in USUALLY and follower[:1].isupper():
            continue
        doc[nxt].is_sent_start = False
    return doc


def add_to(nlp: Any) -> None:
    """Put the component before the parser (or first, in a pipeline without one)."""
    if NAME not in nlp.pipe_names:
        if "parser" in nlp.pipe_names:
            nlp.add_pipe(NAME, before="parser")
        else:
            nlp.add_pipe(NAME, first=True)
