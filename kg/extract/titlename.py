"""Names in paper titles: "Gaia2: Benchmarking LLM Agents ..." names the paper's contribution, Gaia2.

The extractor (kg.extract.pipeline) flags such a name proposed wherever the abstract writes it as the title does,
and adds it as a mention where the NER passed it over.
"""

from __future__ import annotations

import re

from kg.canon import canonical_key
from kg.extract import lexicon as lx
from kg.extract.rules import Candidate, known_type, strong_type

# "Gaia2: Benchmarking LLM Agents ...": a title that opens with a short name and a colon names the paper's own
# contribution (37 of the 40 kg-gold dev titles of that shape whose name is in the abstract, 30 of them flagged
# before without the title); "Survey: ..." and "Position: ..." name nothing.
_TITLE_NAME = re.compile(r"^\s*([^:]{2,60}?)\s*:\s+\S")
_TITLE_NOT_NAMES = {"survey", "review", "position", "position paper", "tutorial", "overview", "editorial", "opinion",
                    "perspective", "commentary", "abstract", "introduction", "correction", "erratum", "keynote",
                    "invited talk", "preface", "case study", "technical report", "extended abstract"}
_TITLE_GENRE = re.compile(r"^\s*(a|an|the)?\s*(\w+\s+){0,3}?(survey|review|overview|tutorial|primer|perspective|"
                          r"position|introduction|retrospective)\b", re.IGNORECASE)  # "LLMs: A Survey", a topic
_TITLE_PART = re.compile(r"^(part|chapter|section|volume|lecture|appendix)\s+\w+$", re.IGNORECASE)
_TITLE_DATASET = re.compile(r"\b(benchmarks?|benchmarking|datasets?|corpus|corpora|suite|testbed)\b", re.IGNORECASE)


def title_name(title: str) -> str | None:
    """The name a title gives its paper's contribution ("Gaia2: Benchmarking ..." -> "Gaia2"), if it has one:
    at most four words before the first colon, in title case (no lower-case word of four letters or more), with a
    capital letter or a digit, not a genre word ("Survey"), a stop word or a generic word."""
    from spacy.lang.en.stop_words import STOP_WORDS

    m = _TITLE_NAME.match(title)
    if not m or _TITLE_GENRE.match(title[m.end(1) :].lstrip(" :")):
        return None
    name = m.group(1)
    if _TITLE_PART.match(name) or known_type(canonical_key(name)):  # "Part 1: ...", "ChatGPT: Jack of all Trades"
        return None
    words = name.split()
    low = name.lower()
    if (len(words) > 4 or low in _TITLE_NOT_NAMES or low in STOP_WORDS or low in lx.GENERIC_WORDS
            or any(len(w) >= 4 and w[0].islower() for w in words) or not any(c.isupper() or c.isdigit() for c in name)):
        return None
    return name


def title_mentions(chosen: list[Candidate], text: str, name: str, title: str) -> list[Candidate]:
    """``chosen`` plus the title's name wherever the abstract says it and no mention covers it, when no
    mention names it yet; its type from its own words, else "dataset" when the subtitle opens as a benchmark's
    ("Benchmarking ...", "A Benchmark for ..."), else method."""
    if any(name in (text[c.start : c.end], c.short_form_of) for c in chosen):
        return chosen
    subtitle = " ".join(title.split(":", 1)[-1].split()[:3])  # "Benchmarking ...", "A Benchmark for ..."
    ty = strong_type(name) or ("dataset" if _TITLE_DATASET.search(subtitle) else "method")
    pat = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")  # not "Gaia2" of "Gaia2-mini"
    added = [Candidate(m.start(), m.end(), ty, 3) for m in pat.finditer(text)
             if not any(c.start < m.end() and m.start() < c.end for c in chosen)]
    return sorted(chosen + added, key=lambda c: c.start) if added else chosen
