"""Canonical keys and ids for entity names: case, hyphen/space and plural variants become one key."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

_DASHES = re.compile(r"[\-\u2010-\u2015\u2212_/]+")
_NON_WORD = re.compile(r"[^\w.+#@]+")
_ACRONYM_PLURAL = re.compile(r"^[A-Z][A-Za-z0-9\-]*[A-Z0-9]s$")
_IRREGULAR = {
    "corpora": "corpus", "criteria": "criterion", "phenomena": "phenomenon", "indices": "index",
    "matrices": "matrix", "vertices": "vertex", "analyses": "analysis", "hypotheses": "hypothesis",
    "bases": "basis", "axes": "axis", "data": "data", "media": "media", "schemata": "schema",
}
_KEEP_S = re.compile(r"(ss|us|is|ics|ous|ws|ys|as|os|'s)$")
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
    text = _DASHES.sub(" ", " ".join(words).casefold())
    text = _NON_WORD.sub(" ", text).strip(" .")
    parts = text.split()
    if not parts:
        return ""
    parts[-1] = singular(parts[-1])
    return " ".join(parts)


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
