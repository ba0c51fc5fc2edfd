"""Related papers by what the abstracts say and what they specifically share, each with its reasons; embeddings
built once and re-used by record content; search by meaning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kg.embed import MODEL_DIR, StaticEmbedder, default_embedder, paper_text
from kg.related import PaperSimilarity, RelatedIndex, TextIndex, Weights, tfidf_rows, words
from kg.store.nxreads import shared_reason, why_related


def test_reasons_say_what_each_paper_does_with_the_shared_entity() -> None:
    assert shared_reason("EVALUATES_ON", "EVALUATES_ON", "GSM8K") == "both evaluate on GSM8K"
    assert shared_reason("ADDRESSES", "ADDRESSES", "lane detection") == "both address lane detection"
    assert shared_reason("PROPOSES", "USES", "H-SPLID") == "this paper proposes H-SPLID; the other uses it"
    assert shared_reason("USES", "PROPOSES", "LoRA") == "this paper uses LoRA; the other proposes it"
    assert why_related([], 0.61) == "abstracts very similar (text similarity 0.61)"


def _index(paper_entities: dict[str, list[str]], texts: dict[str, str], weights: Weights) -> PaperSimilarity:
    ids = sorted(texts)
    emb = default_embedder().embed([texts[p] for p in ids])
    return PaperSimilarity(RelatedIndex(paper_entities), TextIndex(ids, emb, tfidf_rows([texts[p] for p in ids])),
                           weights)


def test_a_common_entity_is_no_reason_and_weighs_little() -> None:
    # 100 papers that all name accuracy; two of them also evaluate on GSM8K.
    texts = {f"p{i:03d}": f"Paper {i} studies topic {i} with words w{i} and accuracy." for i in range(100)}
    ents = {p: ["accuracy"] for p in texts}
    ents["p001"] = ents["p002"] = ["accuracy", "gsm8k"]
    sim = _index(ents, texts, Weights(dense=0.0, lexical=0.0, entities=1.0))
    top = sim.related("p001", 3)
    assert top[0][0] == "p002" and top[0][4] == ["gsm8k", "accuracy"]  # rarest first
    assert sim.specific(top[0][4]) == ["gsm8k"]  # accuracy is in every paper: no reason
    assert len(top) == 1  # an entity every paper has relates none of them (no score above 0)


def test_every_paper_gets_related_papers_even_without_shared_entities() -> None:
    texts = {"a": "Graph neural networks for molecule property prediction.",
             "b": "Message passing networks predict properties of molecules.",
             "c": "A survey of reinforcement learning for robot locomotion."}
    sim = _index({p: [] for p in texts}, texts, Weights())
    for p in texts:
        assert len(sim.related(p, 5)) == 2
    assert sim.related("a", 1)[0][0] == "b"  # the closer text first


def test_tfidf_rows_are_unit_length_and_words_drop_stopwords() -> None:
    m = tfidf_rows(["the cat sat on the mat", "a dog sat on the mat", "the cat ran", ""])
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    assert np.allclose(norms[:3], 1.0, atol=1e-3) and norms[3] == 0.0  # weights kept as float16
    assert m[0].nnz == 4  # cat, sat, mat and "sat mat" (in two texts); not "cat sat" (in this one alone)
    assert tfidf_rows(["one two three four"], top=2)[0].nnz == 2  # the heaviest terms only
    assert words("We propose a Self-Supervised method for 3D point clouds") == ["self-supervised", "3d", "point",
                                                                               "clouds"]


def test_embeddings_are_unit_vectors_and_stable() -> None:
    e = default_embedder()
    a = e.embed(["Diffusion models for image generation.", "", "\ud800 broken text"])
    assert a.shape == (3, e.dims)
    assert np.isclose(np.linalg.norm(a[0]), 1.0) and not a[1].any() and np.isclose(np.linalg.norm(a[2]), 1.0)
    assert np.array_equal(a[:1], StaticEmbedder(MODEL_DIR).embed(["Diffusion models for image generation."]))


def test_related_papers_say_why(seeds_store) -> None:
    for p in seeds_store.by_label("Paper"):
        related = seeds_store.related_papers(p, 5)
        assert len(related) == 5
        for r in related:
            assert r.why.endswith(f"(text similarity {r.text_similarity:.2f})")
            assert [x.entity for x in r.reasons] == r.shared
            for x in r.reasons:
                assert x.reason.startswith(("both ", "this paper ")) and x.entity.name in x.reason


def test_a_rebuild_embeds_only_new_or_changed_records(tmp_path: Path, seeds_store_dir: Path, extractor,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.build import build
    from kg.store.embedded import EmbeddedStore

    store_dir = tmp_path / "store"
    shutil.copytree(seeds_store_dir, store_dir)
    with EmbeddedStore(store_dir) as s:
        before = s._snapshot.text_index()
        n = len(before.papers)
    embedded: list[str] = []
    real = StaticEmbedder.embed

    def counting(self: StaticEmbedder, texts):  # noqa: ANN001, ANN202
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(StaticEmbedder, "embed", counting)
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "x-1", "title": "Contrastive audio pretraining",
                               "abstract": "We learn speech representations without labels by contrasting "
                                           "segments of the same recording with other recordings."}) + "\n")
    with EmbeddedStore(store_dir, writable=True) as s:
        build([new], s, extractor=lambda: extractor)
    assert [t for t in embedded if "contrasting segments" in t] and len(embedded) == 1  # the new paper alone
    with EmbeddedStore(store_dir) as s:
        after = s._snapshot.text_index()
        assert len(after.papers) == n + 1 and s.related_papers("x-1", 3)
        for i, p in enumerate(before.papers):  # the stored embeddings were re-used as they were
            assert np.array_equal(after.dense[after.row[p]], before.dense[i])


def test_the_snapshot_keeps_the_text_index(seeds_store) -> None:
    import networkx as nx

    from kg.store.nxreads import graph_text_index

    snap = seeds_store._snapshot.text_index()
    assert snap is not None and snap.embedder == default_embedder().name
    g = nx.MultiDiGraph()  # the papers alone, without the stored index: it is computed from their texts
    for p in seeds_store.by_label("Paper"):
        g.add_node(p, **dict(seeds_store.graph.nodes[p]))
    fresh = graph_text_index(g)
    assert snap.papers == fresh.papers
    assert np.array_equal(snap.dense, fresh.dense)
    assert (snap.lexical != fresh.lexical).nnz == 0


def test_search_finds_a_paper_described_in_other_words(tmp_path: Path, extractor) -> None:
    from kg.build import build
    from kg.store.embedded import EmbeddedStore

    papers = [
        ("a", "Self-supervised audio representations", "We pretrain an encoder on unlabeled audio by predicting "
         "masked spectrogram frames, and the learned representations transfer to keyword spotting and speaker "
         "identification."),
        ("b", "Vision transformers for remote sensing", "We adapt vision transformers to satellite imagery for "
         "land-cover classification."),
        ("c", "Offline reinforcement learning with conservative critics", "We penalise value estimates of "
         "unseen actions to learn policies from fixed datasets."),
    ]
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in papers))
    with EmbeddedStore(tmp_path / "s", writable=True) as s:
        build([src], s, extractor=lambda: extractor)
    with EmbeddedStore(tmp_path / "s") as s:
        hits = [h for h in s.search("contrastive learning for speech", limit=5) if h.kind == "paper"]
        assert hits and hits[0].id == "a"  # "contrastive" and "speech" are in no abstract: BM25 finds nothing
        assert hits[0].sentence and hits[0].sentence in papers[0][2]
        assert paper_text("T", "A") == "T. A"
