"""Display titles of untitled papers: short, distinct, cut at a word, and the same wherever a title is shown."""

import json

from kg.extract.types import Extraction, Mention
from kg.titles import LIMIT, TitleBook, display_title, shorten
from viz import paper_view


def test_shorten_cuts_at_a_word_with_an_ellipsis_and_no_dangling_words() -> None:
    s = shorten("A central question in sensory neuroscience is how much of the information in a stimulus is kept")
    assert s == "A central question in sensory neuroscience is how much…" and len(s) <= LIMIT
    assert shorten("Short and whole.") == "Short and whole"
    assert shorten("x" * 200).endswith("…") and len(shorten("x" * 200)) <= LIMIT


def test_what_we_study_is_the_label_else_the_named_contribution() -> None:
    text = "We study the problem of training neural networks with quantized parameters. It is hard."
    ext = Extraction(sentences=[(0, 75), (76, len(text))])
    assert display_title(text, ext) == "Training neural networks with quantized parameters"
    text = "We propose H-SPLID, a novel algorithm for learning salient features. It works on CIFAR-10."
    ext = Extraction(sentences=[(0, 68), (69, len(text))],
                     entities=[Mention(11, 18, "H-SPLID", "method", 0, True, None)])
    assert display_title(text, ext) == "H-SPLID: a novel algorithm for learning salient features"
    text = "We study this question in a new setting with many agents. Earlier work did not."
    assert display_title(text, Extraction(sentences=[(0, 58)])).startswith("We study this question")


def test_labels_are_distinct_even_for_the_same_opening() -> None:
    book = TitleBook()
    a = "In this paper, we study the calibration of large language models under distribution shift in the wild."
    b = "In this paper, we study the calibration of large language models under distribution shift for code."
    la = book.label("p1", a, Extraction(sentences=[(0, len(a))]))
    lb = book.label("p2", b, Extraction(sentences=[(0, len(b))]))
    assert la != lb and la.endswith("…") and len(la) <= LIMIT
    assert lb.startswith("Calibration of large language models under distribution shift")
    assert book.label("p3", b, Extraction(sentences=[(0, len(b))])).endswith("(p3)")


def test_seed_titles_are_short_distinct_and_the_same_in_api_views_and_cli(seeds_store, seeds_store_dir, capsys) -> None:
    from kg.cli import main

    papers = seeds_store.list_papers(limit=100).items
    titles = [p.title for p in papers]
    assert len(papers) == 57 and len(set(titles)) == 57
    assert all(len(t) <= LIMIT for t in titles if t.endswith("…"))
    quantized = next(p for p in papers if p.title == "Training neural networks with quantized parameters")
    detail = seeds_store.get_paper(quantized.id)
    assert detail.title == quantized.title
    related = seeds_store.related_papers(papers[0].id, 3)
    assert all(r.paper.title in titles for r in related)
    view = paper_view(seeds_store, quantized.id)
    assert json.dumps(quantized.title)[1:-1] in view.html or quantized.title in view.html
    hits = seeds_store.search("quantized parameters", limit=5)
    assert any(h.kind == "paper" and h.name == quantized.title for h in hits)
    capsys.readouterr()
    assert main(["paper", quantized.id, "--store-dir", str(seeds_store_dir)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == quantized.title



def test_generated_titles_are_marked_for_cypher(seeds_store, tmp_path) -> None:
    from kg.cli import main
    from kg.store.embedded import EmbeddedStore

    rows = seeds_store.cypher("MATCH (p:Paper) RETURN p.title_generated AS g, count(*) AS n").rows
    assert [list(r) for r in rows] == [[True, 57]]  # no seed paper comes with a title
    papers = tmp_path / "two.jsonl"
    papers.write_text(json.dumps({"id": "t1", "title": "A real title", "abstract": "We propose FooNet for parsing."})
                      + "\n" + json.dumps({"id": "t2", "abstract": "We propose BarNet for tagging."}) + "\n")
    assert main(["build", str(papers), "--store-dir", str(tmp_path / "s")]) == 0
    got = EmbeddedStore(tmp_path / "s").cypher("MATCH (p:Paper) RETURN p.id, p.title_generated ORDER BY p.id").rows
    assert [list(r) for r in got] == [["t1", None], ["t2", True]]  # absent, never false, on a real title
