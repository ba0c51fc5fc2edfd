"""Canonical keys and ids for entity names: case, hyphen/space, accent and plural variants become one key."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

# The version of the rules below: a store keeps its entities' name keys (kg.store.snapshot) and recomputes them
# when they were made by other rules. Bump it whenever canonical_key gives another key for some name.
KEY_SCHEME = 4

_DASHES = re.compile(r"[\-\u2010-\u2015\u2212_/]+")
_NON_WORD = re.compile(r"[^\w.+#@]+")
_ACRONYM_PLURAL = re.compile(r"^[A-Z][A-Za-z0-9\-]*[A-Z0-9]s$")
_IRREGULAR = {
    "corpora": "corpus", "criteria": "criterion", "phenomena": "phenomenon", "indices": "index",
    "matrices": "matrix", "vertices": "vertex", "analyses": "analysis", "hypotheses": "hypothesis",
    "bases": "basis", "axes": "axis", "data": "data", "media": "media", "schemata": "schema",
}
# Spelling variants written with a hyphen, a space or nothing, joined before the hyphens become spaces:
# a letter and a digit ("GPT-4", "GPT 4", "GPT4" -> "gpt4"; "Llama-2-7B" -> "llama2 7b"; the digits of "ResNet-18/50"
# stay apart); a digit and a lone letter ("3-D", "7 B"); a lone leading letter and a word ("U-Net", "R-CNN", "t-SNE",
# "k-means"; a hyphen only: "a model" is no compound); prefixes that are no words of their own ("pre-training",
# "multi-agent", "non-convex"; not "re" or "co", which are acronyms too; not before "and"/"or": "pre- and
# post-processing") and a few compounds written either way ("fine-tuning", "back-propagation", "feed-forward").
# Joining can only make two spellings of one name meet (a different name would need the same letters in order).
_SEP = r"[\-\u2010-\u2015\u2212_~\s]"  # "~" is TeX's unbreakable space ("Llama~2")
_LETTER_DIGIT = re.compile(rf"(?<=[^\W\d_]){_SEP}+(?=\d)")  # "LLaMA--2" too
_DIGIT_LETTER = re.compile(rf"(?<=\d){_SEP}(?=[^\W\d_](?![\w]))")
# A lone letter before a word, after any dash: "Q-learning" and "Q–learning" meet. Not after a space: the
# lexicons' patterns write "x benchmark" for any name before "benchmark", and "Q learning" keeps its space.
_LONE_LETTER = re.compile(r"(?<![\w.])([^\W\d_])[\-\u2010-\u2015\u2212](?=[^\W\d_]{2})")
_PREFIX = re.compile(
    rf"(?<![\w.])(pre|multi|non|semi|hyper|auto|neuro|spatio|inter|intra|anti|sub|bi|uni){_SEP}"
    r"(?!(?:and|or|to|vs|versus)\b)(?=[^\W\d_]{2})"
    rf"|(?<![\w.])(fine){_SEP}(?=tun)|(?<![\w.])(back){_SEP}(?=propagat)|(?<![\w.])(feed){_SEP}(?=forward)"
    rf"|(?<![\w.])(over|under){_SEP}(?=(?:fitting|smoothing|sampling|parameteri[sz]))",
    re.IGNORECASE)
_LATEX_ACCENT = re.compile(r"\\['`^\"~=.]\{?([A-Za-z])\}?")  # "Fr\\'echet" is "Fréchet"
_IN_WORD_APOSTROPHE = re.compile(r"(?<=[^\W\d_])['\u2019](?=[^\W\d_])")  # "Fr'echet" (a TeX accent, cleaned)
_KEEP_S = re.compile(r"(ss|us|is|ics|ous|ys|as|os|'s|means)$")
_KEEP_WORDS = {"news", "lens", "series", "species", "means", "physics", "gas", "bias", "chaos", "atlas", "plus",
               "thus", "this", "its", "has", "was", "kinetics", "alias", "canvas", "axis", "basis", "process",
               "class", "loss", "less", "pass", "cross", "across", "mass", "access", "success", "ms"}


def singular(word: str) -> str:
    """English singular of a lower-case word, conservatively (unknown shapes stay as they are)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word in _KEEP_WORDS or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not _KEEP_S.search(word):
        return word[:-1]
    return word


@lru_cache(maxsize=1 << 18)
def canonical_key(surface: str) -> str:
    """The matching key of a name: ``LLMs``, ``LLM`` -> ``llm``; ``Straight-through estimators`` ->
    ``straight through estimator``."""
    words = surface.split()
    if words and _ACRONYM_PLURAL.match(words[-1]):
        words[-1] = words[-1][:-1]
    text = _joined(" ".join(words))
    text = _DASHES.sub(" ", text.casefold())
    text = _NON_WORD.sub(" ", text).strip(" .")
    parts = text.split()
    if not parts:
        return ""
    parts[-1] = singular(parts[-1])
    return " ".join(parts)


def _joined(text: str) -> str:
    """``text`` with its compound spellings joined (the rules above) and accents dropped ("Fréchet" -> "Frechet")."""
    if not text.isascii():
        # A spacing accent ("Fr´echet", from PDF text) goes first: decomposed it would leave a space.
        text = "".join(c for c in text if unicodedata.category(c) != "Sk")
        text = unicodedata.normalize("NFKC", "".join(_unaccented(unicodedata.normalize("NFKD", text))))
    if "\\" in text:
        text = _LATEX_ACCENT.sub(r"\1", text)
    if "'" in text or "\u2019" in text:
        text = _IN_WORD_APOSTROPHE.sub("", text)
    text = _PREFIX.sub(lambda m: next(g for g in m.groups() if g), text)
    text = _LONE_LETTER.sub(r"\1", text)
    text = _LETTER_DIGIT.sub("", text)
    return _DIGIT_LETTER.sub("", text)


def _unaccented(chars: str) -> list[str]:
    """Decomposed ``chars`` without the marks on Latin letters; other scripts keep theirs (a kana's voicing mark
    or a Devanagari vowel sign is part of the letter, not an accent)."""
    out: list[str] = []
    latin = False
    for c in chars:
        if unicodedata.combining(c):
            if not latin:
                out.append(c)
            continue
        latin = unicodedata.name(c, "").startswith("LATIN")
        out.append(c)
    return out


def entity_id(key: str) -> str:
    """A URL-safe, stable id for a canonical key (``mutual information`` -> ``mutual-information``)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", key).strip("-.")
    if not slug or slug != key.replace(" ", "-"):
        slug = (slug + "-" if slug else "e-") + hashlib.sha1(key.encode()).hexdigest()[:6]
    return slug


@lru_cache(maxsize=1 << 18)
def looks_like_acronym(surface: str) -> bool:
    """True for short capitalised forms (``MI``, ``LLMs``, ``C-PMI``) that abbreviations may define."""
    s = surface.strip()
    if not 2 <= len(s) <= 12 or " " in s:
        return False
    upper = sum(c.isupper() for c in s)
    return upper >= 2 or (upper == 1 and len(s) <= 3)
