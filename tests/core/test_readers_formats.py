"""CSV/TSV, BibTeX, arXiv Atom, OpenAlex and Semantic Scholar readers: real-shaped files and hostile ones."""

import gzip
import json
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.readers import PaperRecord, Skip, content_id, read_papers
from kg.readers.openalex import rebuild_abstract

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ABS = "We propose FooNet, a graph network for molecule property prediction, and evaluate it on QM9."


def read(*paths, **kw):
    items = list(read_papers(paths, **kw))
    return [i for i in items if isinstance(i, PaperRecord)], [i for i in items if isinstance(i, Skip)]


# -- the shipped examples, one per format ----------------------------------------------------------------------

def test_every_example_file_reads_with_its_fields() -> None:
    recs, skips = read(EXAMPLES)
    by_id = {r.id: r for r in recs}
    assert len(by_id) == len(recs) == 12
    # The paper whose BibTeX entry has no abstract comes with one from Semantic Scholar, under its arXiv id.
    assert by_id["arXiv:2401.02987"].venue == "arXiv.org" and by_id["arXiv:2401.02987"].published == "2024-01-02"
    csv_row = by_id["arXiv:2401.00700"]
    assert csv_row.venue == "arXiv" and csv_row.year == 2024 and csv_row.authors == ["Hongjun Zhang"]
    zotero = by_id["arXiv:2401.01089"]  # the arXiv id comes from the Url column, names from "Last, First"
    assert zotero.authors[:2] == ["Xianjun Yang", "Stephen D. Wilson"] and zotero.published == "2024-01-02"
    bib = by_id["arXiv:2401.01242"]
    assert bib.title == "Encoding Binary Events from Continuous Time Series in Rooted Trees"
    assert bib.authors == ["Tobias Engelhardt Rasmussen", "Siv Sørensen"] and bib.venue == "arXiv preprint"
    trec = next(r for r in recs if r.title and r.title.startswith("TREC iKAT"))
    assert trec.id == content_id(trec.abstract) and trec.published == "2024-01-02" and trec.year == 2024
    assert trec.authors[-1] == "Shubham Chatterjee"  # "and others" is not an author
    atom = by_id["arXiv:2401.06168"]
    assert atom.venue == "arXiv" and atom.published == "2024-01-02" and atom.abstract.startswith("Poker is")
    oa = by_id["arXiv:2401.01754"]  # from the arXiv DOI 10.48550/arxiv.2401.01754
    assert oa.venue == "arXiv (Cornell University)" and oa.published == "2024-01-03" and len(oa.authors) == 5
    assert by_id["openalex:W4390602517"].abstract.startswith("Data augmentation is an effective technique")
    assert {(Path(s.where.split(":")[0]).name, s.reason) for s in skips} == {
        ("refs.bib", "no abstract"), ("semantic-scholar.json", "no abstract")}
    assert any(s.where.endswith("refs.bib:22 (aboagye2024pretrained)") for s in skips)


# -- CSV and TSV ------------------------------------------------------------------------------------------------

def test_a_csv_of_papers_is_never_a_seed_list(tmp_path: Path) -> None:
    f = tmp_path / "papers.csv"
    f.write_text("id,abstract\nA1,First abstract here.\nA2,\"Second, with a comma.\"\n", encoding="utf-8")
    recs, skips = read(f)
    assert [(r.id, r.abstract) for r in recs] == [("A1", "First abstract here."), ("A2", "Second, with a comma.")]
    assert not skips and recs[1].source.endswith("papers.csv:3")


def test_column_synonyms_case_and_separators(tmp_path: Path) -> None:
    f = tmp_path / "export.csv"
    f.write_text("Paper_ID;ABSTRACT NOTE;Publication Year;Journal;Author\n"
                 "x1;Some abstract;2023-05-02;JMLR;Ann Lee and Bo Chen\n", encoding="utf-8")
    (r,), _ = read(f)
    assert (r.id, r.abstract, r.year, r.venue, r.authors) == ("x1", "Some abstract", 2023, "JMLR",
                                                              ["Ann Lee", "Bo Chen"])


def test_map_names_other_columns_and_a_missing_abstract_column_is_one_skip(tmp_path: Path) -> None:
    f = tmp_path / "odd.csv"
    f.write_text("Ref,Text of paper,When\nr1,An abstract,2021\n", encoding="utf-8")
    recs, skips = read(f)
    assert not recs and len(skips) == 1
    assert skips[0].reason == "no abstract column" and "'Text of paper'" in skips[0].detail
    assert "--map COLUMN=abstract" in skips[0].message()
    (r,), _ = read(f, column_map={"text of paper": "abstract", "Ref": "id", "when": "year"})
    assert (r.id, r.abstract, r.year) == ("r1", "An abstract", 2021)
    with pytest.raises(InputError, match="--map Ref=colour"):
        read(f, column_map={"Ref": "colour"})


def test_quoted_newlines_keep_line_numbers_and_bad_rows_are_located(tmp_path: Path) -> None:
    f = tmp_path / "p.csv"
    f.write_bytes(b"\xef\xbb\xbfid,title,abstract,year\n"  # Excel's UTF-8 byte-order mark
                  b'a,"T","line one\nline two",2020\n'
                  b"b,T2,caf\xe9 in latin-1,2020\n"  # one row from another encoding
                  b"c,T3,,2020\n"
                  b"d,T4,fine,soon\n"
                  b"e,T5,also fine,2021\n")
    recs, skips = read(f)
    assert [r.id for r in recs] == ["a", "e"] and recs[0].abstract == "line one\nline two"
    assert {s.where.rsplit(":", 1)[1]: s.reason for s in skips} == {
        "4": "not valid UTF-8", "5": "no abstract", "6": "field 'year' is not an integer"}


def test_utf16_tsv_as_excel_saves_unicode_text(tmp_path: Path) -> None:
    f = tmp_path / "excel.tsv"
    f.write_bytes("Title\tAbstract\tAuthors\nÜber\tWe study naïve Bayes.\tJörg Müller\n".encode("utf-16"))
    (r,), skips = read(f)
    assert not skips and (r.title, r.abstract, r.authors) == ("Über", "We study naïve Bayes.", ["Jörg Müller"])


def test_a_10_mb_field_is_one_skip_and_the_next_row_is_read(tmp_path: Path) -> None:
    f = tmp_path / "big.csv"
    with f.open("w", encoding="utf-8") as fh:
        fh.write("id,abstract\n")
        fh.write("huge," + "x" * 10_000_000 + "\n")
        fh.write('quoted,"' + "y" * 3_000_000 + '"\n')
        fh.write("ok,A normal abstract.\n")
    recs, skips = read(f)
    assert [r.id for r in recs] == ["ok"]
    assert [(s.where.rsplit(":", 1)[1], s.reason) for s in skips] == [("2", "line too long"), ("3", "line too long")]


def test_gzipped_csv(tmp_path: Path) -> None:
    f = tmp_path / "p.csv.gz"
    f.write_bytes(gzip.compress(b"abstract,title\nText one.,One\n"))
    (r,), _ = read(f)
    assert r.title == "One" and r.id == content_id("Text one.")


# -- BibTeX -----------------------------------------------------------------------------------------------------

def test_bibtex_accents_macros_broken_and_duplicate_entries(tmp_path: Path) -> None:
    f = tmp_path / "refs.bib"
    f.write_text(
        "@article{a, title={Na{\\\"\\i}ve {B}ayes for {\\'E}t{\\'e}}, author={M{\\\"u}ller, J{\\\"o}rg and "
        "Smith, Ann}, journal={JMLR}, year={2021}, doi={10.5555/ABC.1}, abstract={We revisit \\emph{na\\\"ive} "
        "Bayes.}}\n\n"
        "@inproceedings{b, title = \"Broken\n\n"
        "@misc{c, title={Kept}, abstract={An abstract after a broken entry.}, year=2020}\n"
        "@misc{c, title={Again}, abstract={Same key twice.}}\n",
        encoding="utf-8")
    recs, skips = read(f)
    assert [r.title for r in recs] == ["Naïve Bayes for Été", "Kept"]
    a = recs[0]
    assert (a.id, a.authors, a.venue, a.year) == ("doi:10.5555/abc.1", ["Jörg Müller", "Ann Smith"], "JMLR", 2021)
    assert a.abstract == "We revisit naïve Bayes."
    assert [(s.where.rsplit("/", 1)[1], s.reason) for s in skips] == [
        ("refs.bib:3", "malformed BibTeX entry"), ("refs.bib:6 (c)", "duplicate BibTeX key")]


def test_bibtex_with_a_10_mb_abstract_and_a_bom(tmp_path: Path) -> None:
    f = tmp_path / "big.bib"
    f.write_bytes(b"\xef\xbb\xbf@misc{big, abstract={" + b"word " * 2_000_000 + b"}}\n"
                  b"@misc{small, abstract={A short abstract.}}\n")
    recs, skips = read(f)
    assert [r.abstract for r in recs] == ["A short abstract."]
    assert [(s.where.rsplit("/", 1)[1], s.reason) for s in skips] == [("big.bib:1 (big)", "abstract too long")]


# -- arXiv Atom -------------------------------------------------------------------------------------------------

FEED = """<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
<entry><id>http://arxiv.org/abs/2401.00001v2</id><published>2024-01-01T10:00:00Z</published>
<title>One</title><summary>First abstract.</summary><author><name>A B</name></author>
<arxiv:doi>10.1000/xyz</arxiv:doi><arxiv:journal_ref>JMLR 25 (2024)</arxiv:journal_ref></entry>
{more}"""


def test_atom_entries_fields_and_api_errors(tmp_path: Path) -> None:
    f = tmp_path / "q.atom"
    f.write_text(FEED.format(more="<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>"
                                  "<title>Error</title><summary>incorrect id format for 1234</summary></entry>"
                                  "<entry><id>http://arxiv.org/abs/2401.00002v1</id><title>No abstract</title>"
                                  "</entry></feed>"), encoding="utf-8")
    recs, skips = read(f)
    (r,) = recs
    assert (r.id, r.title, r.venue, r.published, r.year, r.authors) == (
        "arXiv:2401.00001", "One", "JMLR 25 (2024)", "2024-01-01", 2024, ["A B"])
    assert [(s.where.rsplit(":", 1)[1].strip(), s.reason) for s in skips] == [
        ("entry 2", "arXiv API error entry"), ("entry 3", "no abstract")]


def test_truncated_feed_keeps_the_entries_before_the_break(tmp_path: Path) -> None:
    f = tmp_path / "cut.xml"
    f.write_text(FEED.format(more="<entry><id>http://arxiv.org/abs/2401.00003</id><summary>Cut he"), encoding="utf-8")
    recs, skips = read(f)
    assert [r.id for r in recs] == ["arXiv:2401.00001"]
    assert len(skips) == 1 and skips[0].reason == "malformed XML" and "after entry 1" in skips[0].detail


@pytest.mark.parametrize("doctype", [
    # Billion laughs: ten levels of ten references would expand to 10^9 copies.
    '<!DOCTYPE feed [<!ENTITY a "ha">' + "".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9)) + "]>",
    '<!DOCTYPE feed [<!ENTITY x SYSTEM "file:///etc/passwd">]>',  # an external entity (XXE)
])
def test_entity_tricks_are_refused_not_expanded(tmp_path: Path, doctype: str) -> None:
    f = tmp_path / "evil.atom"
    f.write_text(f'<?xml version="1.0"?>{doctype}<feed xmlns="http://www.w3.org/2005/Atom"><entry>'
                 "<id>x</id><summary>&j; &x;</summary></entry></feed>", encoding="utf-8")
    recs, skips = read(f)  # refused at the DTD: with expansion this would take gigabytes
    assert not recs and [s.reason for s in skips] == ["unsafe XML"]


def test_xml_that_is_not_a_feed_is_one_skip(tmp_path: Path) -> None:
    f = tmp_path / "other.xml"
    f.write_text("<rss><channel><item/></channel></rss>", encoding="utf-8")
    recs, skips = read(f)
    assert not recs and skips[0].reason == "not an Atom feed" and "<rss>" in skips[0].detail


# -- OpenAlex and Semantic Scholar ------------------------------------------------------------------------------

def test_openalex_inverted_index_rebuilds_the_abstract() -> None:
    assert rebuild_abstract({"Deep": [0], "nets": [1, 3], "learn": [2]}) == "Deep nets learn nets"
    assert rebuild_abstract({"far": [10**12], "near": [0]}) == "near far"  # positions are not list indexes


def test_openalex_snapshot_lines_and_hostile_indexes(tmp_path: Path) -> None:
    words = ABS.split()
    good = {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1234/ABC", "display_name": "FooNet",
            "publication_date": "2022-03-04", "host_venue": {"display_name": "ICML"},
            "authorships": [{"author": {"display_name": "Ann Lee"}}],
            "abstract_inverted_index": {w: [i] for i, w in enumerate(words)}}
    rows = [good,
            {"id": "https://openalex.org/W2", "abstract_inverted_index": {"a": "zero"}},
            {"id": "https://openalex.org/W3", "abstract_inverted_index": {f"w{i}": [i] for i in range(100_001)}},
            {"id": "https://openalex.org/W4", "abstract_inverted_index": None}]
    f = tmp_path / "works.jsonl.gz"
    f.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in rows).encode()))
    recs, skips = read(f)
    (r,) = recs
    assert (r.id, r.abstract, r.title, r.venue, r.year, r.published, r.authors) == (
        "doi:10.1234/abc", ABS, "FooNet", "ICML", 2022, "2022-03-04", ["Ann Lee"])
    assert [(s.where.rsplit(":", 1)[1], s.reason) for s in skips] == [
        ("2", "field 'abstract_inverted_index' is unusable"), ("3", "field 'abstract_inverted_index' is unusable"),
        ("4", "no abstract")]


def test_semantic_scholar_search_answer(tmp_path: Path) -> None:
    f = tmp_path / "search.json"
    f.write_text(json.dumps({"total": 2, "offset": 0, "data": [
        {"paperId": "abc123", "title": "T", "abstract": ABS, "year": 2023, "venue": "",
         "journal": {"name": "Nature"}, "authors": [{"authorId": "1", "name": "Ann Lee"}],
         "externalIds": {"DOI": "10.5678/X"}, "publicationDate": "2023-07-01"},
        {"paperId": "def456", "title": "T2", "abstract": "Other text.", "externalIds": {}},
        "not a paper"]}), encoding="utf-8")
    recs, skips = read(f)
    assert [(r.id, r.venue) for r in recs] == [("doi:10.5678/x", "Nature"), ("s2:def456", None)]
    assert recs[0].published == "2023-07-01" and recs[0].authors == ["Ann Lee"]
    assert [(s.where.rsplit(":", 1)[1].strip(), s.reason) for s in skips] == [("entry 3", "not a JSON object")]


def test_json_lines_named_json_and_a_list_named_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"id": "x1", "abstract": "One."}\n{"id": "x2", "abstract": "Two."}\n')
    (tmp_path / "b.jsonl").write_text('[{"id": "y1", "abstract": "Three."}]')
    recs, skips = read(tmp_path / "a.json", tmp_path / "b.jsonl")
    assert [r.id for r in recs] == ["x1", "x2", "y1"] and not skips


def test_unknown_extension_is_an_input_error_and_directories_take_every_format(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# not papers")
    with pytest.raises(InputError, match="unknown format"):
        read(tmp_path / "notes.md")
    (tmp_path / "p.tsv").write_text("abstract\nAn abstract.\n")
    (tmp_path / "r.bib").write_text("@misc{k, abstract={Another abstract.}}")
    recs, _ = read(tmp_path)
    assert sorted(r.abstract for r in recs) == ["An abstract.", "Another abstract."]


def test_a_table_saved_as_txt_is_refused_not_read_as_one_paper(tmp_path: Path) -> None:
    f = tmp_path / "papers.txt"
    f.write_text("id\ttitle\tabstract\nA1\tT\tAn abstract.\nA2\tU\tAnother.\n", encoding="utf-8")
    recs, skips = read(f)
    assert not recs and [(s.reason, s.detail) for s in skips] == [
        ("a TSV table, not a seed list", "the first line is a header row; name the file .tsv")]
