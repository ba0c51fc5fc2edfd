"""BibTeX (``.bib``) from reference managers: every entry with an abstract, LaTeX accents decoded."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from kg.readers.base import (
    MAX_ABSTRACT_CHARS,
    PaperRecord,
    Skip,
    decode_document,
    make_record,
    parse_date,
    read_whole,
)
from kg.readers.ids import arxiv_id, paper_id

VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "eventtitle", "series")
TEXT_FIELDS = ("title", "abstract", "date", "year", *VENUE_FIELDS)
_latex = None


def _decode(value: object) -> object:
    """LaTeX to Unicode (``M{\\"u}ller`` -> Müller, ``\\emph{x}`` -> x; math kept as written). pylatexenc costs
    about 8 ms a kilobyte, so values without a backslash only lose their braces."""
    global _latex
    if not isinstance(value, str):
        return value
    if "\\" not in value:
        return value.replace("{", "").replace("}", "")
    if _latex is None:
        from pylatexenc.latex2text import LatexNodes2Text

        _latex = LatexNodes2Text(math_mode="verbatim")
    return _latex.latex_to_text(value)


def _names(field: object) -> list[str]:
    """NameParts from bibtexparser's SplitNameParts -> "First von Last, Jr"; plain strings as they are."""
    out = []
    for n in field if isinstance(field, list) else []:
        if isinstance(n, str):
            out.append(str(_decode(n)))
            continue
        name = " ".join(n.first + n.von + n.last)
        out.append(str(_decode(name + (", " + " ".join(n.jr) if n.jr else ""))))
    return [n for n in out if n.strip() and n.strip().lower() != "others"]


def read_bibtex(path: Path) -> Iterator[PaperRecord | Skip]:
    """One record per entry; entries without an abstract, and blocks that do not parse, are located skips."""
    import bibtexparser
    from bibtexparser import middlewares as mw
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock

    data = read_whole(path)
    text = data if isinstance(data, Skip) else decode_document(data, f"{path}:1")
    if isinstance(text, Skip):
        yield text
        return
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # it logs each failed block; kg reports them itself
    library = bibtexparser.parse_string(text, append_middleware=[mw.SeparateCoAuthors(), mw.SplitNameParts()])
    for block in library.blocks:
        where = f"{path}:{(block.start_line or 0) + 1}"  # start_line is None only for a block built by hand
        if isinstance(block, DuplicateBlockKeyBlock):
            yield Skip(f"{where} ({block.key})", "duplicate BibTeX key")
            continue
        if isinstance(block, ParsingFailedBlock):
            yield Skip(where, "malformed BibTeX entry", str(block.error).split("\n")[0][:200])
            continue
        if not isinstance(block, Entry):  # @string, @preamble, @comment and text between entries
            continue
        where = f"{where} ({block.key})"
        f = {k.lower(): v.value for k, v in block.fields_dict.items()}
        raw = f.get("abstract")
        if isinstance(raw, str) and len(raw) > 2 * MAX_ABSTRACT_CHARS:  # not worth decoding: it cannot fit
            yield Skip(where, "abstract too long", f"{len(raw)} characters, limit {MAX_ABSTRACT_CHARS}")
            continue
        f.update((k, _decode(f[k])) for k in TEXT_FIELDS if k in f)
        year, published = f.get("year"), None
        if f.get("date"):  # biblatex
            y, published = parse_date(f["date"])
            year = year or y
        eprint = f.get("eprint") if str(f.get("archiveprefix", "arxiv")).lower() == "arxiv" else None
        yield make_record(
            where, abstract=f.get("abstract"), title=f.get("title"), year=year,
            id=paper_id(arxiv=eprint or _arxiv_url(f.get("url")), doi=f.get("doi")),
            venue=next((f[k] for k in VENUE_FIELDS if isinstance(f.get(k), str) and f[k].strip()), None),
            authors=_names(f.get("author")), published=published)


def _arxiv_url(url: object) -> str | None:
    return url if isinstance(url, str) and arxiv_id(url) else None
