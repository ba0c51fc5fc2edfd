"""Indexed search finds exactly what scanning every entity and paper finds, in the same order."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import tantivy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.canon import canonical_key
from kg.embed import default_embedder, paper_text
from kg.graph import LABEL_TYPES
from kg.models import SearchHit
from kg.search import JoinedText, NameIndex, lcs_length
from kg.semantic import DENSE_DEPTH, DENSE_FLOOR, best_sentence
from kg.store.nxreads import PAPER_RERANK

_ANALYSER = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
             .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())


def analyse(text: str) -> list[str]:
    return _ANALYSER.analyze(text.encode("utf-8", "replace").decode("utf-8"))


def _in_a_row(seq: list[str], tokens: list[str]) -> bool:
    n = len(seq)
    return any(tokens[i : i + n] == seq for i in range(len(tokens) - n + 1))


def scan(store, q: str, limit: int = 20) -> list[SearchHit]:
    """The search rules applied to every node: the reference the indexes must agree with."""
    qk = canonical_key(q)
    if not qk:
        return []
    g = store.graph
    hits = []
    for eid in store.entity_ids():
        m = store._match_entity(eid, qk)
        if m:
            d = g.nodes[eid]
            score = m[0] * (1.0 + 0.1 * math.log1p(d["paper_count"]))
            hits.append(SearchHit(kind="entity", id=eid, name=d["name"], type=LABEL_TYPES[d["label"]],
                                  score=round(score, 6), matched=m[1]))
    # Papers: those holding every word of the query (as tantivy's en_stem analyser cuts words), scored by the
    # index's BM25 scaled to the best (0.9) plus 0.3 for a link to the entity the query names.
    words = [w for w in (analyse(x) for x in q.replace('"', " ").split()) if w]
    alias_hit = store._alias_index().get(qk)
    matching = set()
    for pid in store.by_label("Paper"):
        d = g.nodes[pid]
        fields = [analyse(d["title"]), analyse(d["abstract"])]
        # A word the analyser cuts in several ("resnet-50") is a phrase: its pieces in a row, in one field.
        if words and all(any(_in_a_row(w, f) for f in fields) for w in words):
            matching.add(pid)
    total, found = store._fulltext().search(q, limit=100_000)
    assert {p for p, _ in found} == matching and total == len(matching), q
    # ... fused by reciprocal rank with the papers nearest the query by embedding (every paper embedded afresh
    # here, not read from the store), the fused list cut at limit + PAPER_RERANK before the entity bonus.
    papers = sorted(store.by_label("Paper"))
    emb = default_embedder().embed([paper_text(None if g.nodes[p].get("title_generated") else g.nodes[p]["title"],
                                               g.nodes[p]["abstract"]) for p in papers]).astype(np.float16)
    sims = emb.astype(np.float32) @ default_embedder().embed([q])[0]
    near = sorted(((p, float(s)) for p, s in zip(papers, sims.tolist(), strict=True) if s >= DENSE_FLOOR),
                  key=lambda x: (-x[1], x[0]))[:DENSE_DEPTH]
    rrf: dict[str, float] = {}
    for ranking in (found[: limit + PAPER_RERANK], near):
        for r, (pid, _) in enumerate(ranking):
            rrf[pid] = rrf.get(pid, 0.0) + 1 / (60 + r + 1)
    top = max(rrf.values(), default=1.0)
    fused = sorted(((p, round(v / top, 6)) for p, v in rrf.items()), key=lambda x: (-x[1], x[0]))
    for pid, fscore in fused[: limit + PAPER_RERANK]:
        d = g.nodes[pid]
        has_entity = alias_hit is not None and g.has_edge(pid, alias_hit)
        score = round(0.9 * fscore + (0.3 if has_entity else 0.0), 6)
        hits.append(SearchHit(kind="paper", id=pid, name=d["title"], type="paper", score=score, matched=d["title"],
                              sentence=best_sentence(q, d["abstract"])))
    hits.sort(key=lambda h: (-h.score, h.kind, h.id))
    return hits[:limit]


def queries(store) -> list[str]:
    rng = random.Random(11)
    g = store.graph
    out = ["neural network", "gan", "graph", "transformer", "a", "llm", "GNN", "data set", "ImageNet", "deep deep",
           "zzzz", "large language models", "attention mechanism", "resnet-50", "ab", "diffusion modle",
           "reinforcement learing", "of the", "state-of-the-art", "(", "x"]
    for e in rng.sample(store.entity_ids(), 120):
        name = g.nodes[e]["name"]
        out += [name, name[: max(1, len(name) // 2)], name[1:], name[:-1] + "q", name.upper()]
    for p in rng.sample(store.by_label("Paper"), 25):
        words = g.nodes[p]["abstract"].split()
        i = rng.randrange(max(1, len(words) - 3))
        out.append(" ".join(words[i : i + rng.randint(1, 3)]))
    return out


def test_indexed_search_equals_a_full_scan(seeds_store) -> None:
    for q in queries(seeds_store):
        for limit in (20, 3):
            assert seeds_store.search(q, limit=limit) == scan(seeds_store, q, limit), (q, limit)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="abcdeilmnorst -.()", min_size=1, max_size=14))
def test_any_query_equals_a_full_scan(seeds_store, q: str) -> None:
    assert seeds_store.search(q, limit=10) == scan(seeds_store, q, 10)


def test_name_index_keeps_every_fuzzy_match() -> None:
    """The bigram and quick_ratio bounds never drop a name difflib would accept (names beyond ASCII too)."""
    import difflib

    rng = random.Random(5)
    alphabet = "abcdefgh \u00e9"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))).strip() or "a" for _ in range(3000)]
    index = NameIndex([[n] for n in names])
    for _ in range(300):
        q = "".join(rng.choice(alphabet) for _ in range(rng.randint(4, 10))).strip()
        if len(q) < 4:
            continue
        want = {i for i, n in enumerate(names)
                if abs(len(n) - len(q)) <= 3 and difflib.SequenceMatcher(None, q, n).ratio() >= 0.8}
        assert want <= index.candidates(q), q


@given(st.text(alphabet="abc\u00e9 ", max_size=14), st.text(alphabet="abc\u00e9 ", max_size=14))
def test_lcs_length_equals_the_dynamic_programme(a: str, b: str) -> None:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    assert lcs_length(a, b) == table[-1][-1]


@pytest.mark.parametrize("needle,rows", [("net", [0, 2]), ("work", [0]), ("zz", []), ("n", [0, 1, 2]),
                                         (" n", [0, 1]), ("s.", [0]), ("", [])])
def test_joined_text_finds_the_strings_holding_a_substring(needle: str, rows: list[int]) -> None:
    t = JoinedText(["neural networks.", "graph nodes", "resnet"], prefix=" ")
    assert t.rows_containing(needle).tolist() == rows


def test_entity_listing_by_name_equals_a_full_scan(seeds_store) -> None:
    for q in queries(seeds_store)[::7]:
        for type in (None, "method", "task"):
            got = seeds_store.list_entities(q=q, type=type, limit=1000)
            ids = seeds_store.by_label({"method": "Method", "task": "Task"}[type]) if type else seeds_store.entity_ids()
            want = [e for e in ids if seeds_store._match_entity(e, canonical_key(q))]
            assert sorted(e.id for e in got.items) == sorted(want) and got.total == len(want), (q, type)


def test_warm_builds_every_lazy_index_once(seeds_store_dir) -> None:
    """`kg serve` calls warm() in a background thread: afterwards no request builds an index."""
    import threading

    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(seeds_store_dir)
    before = store.search("neural network")
    store._search = store._alias = store._related = None
    worker = threading.Thread(target=store.warm)
    worker.start()
    during = store.search("neural network")  # answered while the indexes are being built
    worker.join()
    indexes = (store._search, store._alias, store._related)
    assert all(x is not None for x in indexes)
    assert store.search("neural network") == during == before
    assert (store._search, store._alias, store._related) == indexes


def test_a_query_with_a_lone_surrogate_is_answered(seeds_store) -> None:
    """Python callers can pass any str; the byte-level indexes must not fail on one that is not valid UTF-8."""
    assert seeds_store.search("neural \ud800network") == scan(seeds_store, "neural \ud800network")
