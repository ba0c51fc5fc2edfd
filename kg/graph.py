"""Derive the knowledge graph from papers and their extractions: canonical entities, typed edges, evidence."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

from kg.canon import canonical_key, entity_id, looks_like_acronym
from kg.clean import plain_name
from kg.extract import lexicon as lx
from kg.extract.rules import strong_type
from kg.extract.types import Extraction, Mention
from kg.readers import PaperRecord
from kg.related import PaperSimilarity, RelatedIndex, TextIndex, TfidfBuilder
from kg.reported import RESULT_EDGES, RESULT_LABEL, SlotLinks, parse_value, result_name, with_result_mentions
from kg.resolve import Overrides, Resolver
from kg.titles import TitleBook

ENTITY_LABELS = {"method": "Method", "model": "Model", "dataset": "Dataset", "task": "Task", "metric": "Metric",
                 "concept": "Concept"}
LABEL_TYPES = {v: k for k, v in ENTITY_LABELS.items()}
PAPER_EDGE_FOR_TYPE = {"dataset": "EVALUATES_ON", "task": "ADDRESSES", "method": "USES", "model": "USES",
                       "metric": "USES", "concept": "MENTIONS"}
PAPER_EDGE_TYPES = ("PROPOSES", "USES", "EVALUATES_ON", "ADDRESSES", "MENTIONS")
ENTITY_EDGE_TYPES = ("USED_FOR", "EVALUATED_ON", "COMPARED_WITH", "PART_OF", "IS_A")
_MATH = re.compile(r"[_^{}\\$]")
TYPE_PRIORITY = {"dataset": 0, "model": 1, "metric": 2, "task": 3, "method": 4, "concept": 5}
SHORT_NAME_RATIO = 5  # a versioned short form names its node when written this many times as often as full forms
RELATED_K = 5  # RELATED_TO edges stored per paper; the API ranks any k from the index
# Date-valued properties: ISO text ('2024-01-02') in the built graph and on disk (graph.jsonl, snapshot, exports),
# a Cypher date in a loaded store's graph (`with_dates`) and in Neo4j, so `p.published >= date('2025-06-01')`
# works on both stores.
DATE_PROPERTIES = ("published",)


def with_dates(g: nx.MultiDiGraph, *, as_text: bool = False) -> nx.MultiDiGraph:
    """Turn the date-valued node properties of ``g`` from ISO text into Cypher dates (or back, ``as_text``),
    in place; either way round is idempotent."""
    from kg.cypher.temporal import Date
    from kg.cypher.temporal_parse import parse_date

    dates: dict[str, Date] = {}  # papers share days: parse each once (and share the value)
    for attrs in g._node.values():
        for k in DATE_PROPERTIES:
            v = attrs.get(k)
            if as_text and isinstance(v, Date):
                attrs[k] = str(v)
            elif not as_text and isinstance(v, str):
                d = dates.get(v)
                if d is None:
                    d = dates[v] = Date(parse_date(v))
                attrs[k] = d
    return g


@dataclass(slots=True)
class PaperInput:
    """A paper and what extraction found in it: the unit the store keeps and the graph is derived from."""

    record: PaperRecord
    extraction: Extraction


def _is_noise(key: str, ty: str, paper_count: int) -> bool:
    words = key.split()
    if not words or key in lx.GENERIC_WORDS or all(w in lx.GENERIC_WORDS or w in lx.STRIP_LEADING for w in words):
        return True
    if ty == "dataset" and all(w in lx.DATASET_ROLE_WORDS for w in words):
        return True
    # A concept is a notion papers share: one that a single paper mentions ("noisy measurements") is left in
    # that paper's extraction log but not made a node. Named things (methods, datasets, ...) always are.
    return ty == "concept" and paper_count < 2


def _slug(prefix: str, name: str) -> str:
    return prefix + (re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-") or "unknown")


def derive_graph(papers: Mapping[str, PaperInput] | Iterable[PaperInput], *,
                 related_k: int = RELATED_K, embeddings: Mapping[str, np.ndarray] | None = None,
                 overrides: Overrides | None = None, resolver: Resolver | None = None) -> nx.MultiDiGraph:
    """Build the whole graph from ``papers`` (by id). Deterministic: the same papers give the same graph.

    Each paper's embedding comes from ``embeddings`` (by input hash: what an earlier build computed for the same
    record) or is computed as the papers stream by in pass 2; the text index (embeddings and TF-IDF rows) is
    left in ``g.graph["text_index"]`` for the store to keep, and with the entities it ranks the papers'
    ``RELATED_TO`` edges.

    The papers are read three times, in id order, and never all kept: a mapping that reads them from disk
    on access (kg.cache.CachedInputs) keeps a large corpus out of memory while its graph is built.
    """
    if not isinstance(papers, Mapping):
        papers = {p.record.id: p for p in papers}
    ids = sorted(papers)

    def plist() -> Iterator[PaperInput]:
        return (papers[pid] for pid in ids)

    def extended(p: PaperInput) -> tuple[Extraction, list[SlotLinks]]:
        """The paper's extraction with a mention for each result slot no mention names (kg.reported)."""
        return with_result_mentions(p.extraction, p.record.abstract)

    if resolver is None:
        resolver = Resolver(((p.record.id, extended(p)[0]) for p in plist()), overrides)
    g = nx.MultiDiGraph()

    # Pass 1: resolve every mention, count types, surfaces and papers per canonical key.
    resolved: list[list[str]] = []
    type_votes: dict[str, Counter[str]] = defaultdict(Counter)
    surfaces: dict[str, Counter[str]] = defaultdict(Counter)
    short_forms: dict[str, Counter[str]] = defaultdict(Counter)
    key_papers: dict[str, set[str]] = defaultdict(set)
    why: dict[str, dict[str, str]] = defaultdict(dict)  # node key -> form -> why it joined (first paper's reason)
    for p in plist():
        keys = []
        ext = extended(p)[0]
        for m, res in zip(ext.entities, resolver.resolve(ext), strict=True):
            # A mention with math in it ("alpha^2", "Y_{1") is a formula fragment, not a thing to link.
            k = "" if res is None or _MATH.search(m.text) else res.key
            keys.append(k)
            if not k or res is None:
                continue
            type_votes[k][m.type] += 1
            surface = plain_name(m.text)
            if looks_like_acronym(surface) and k != canonical_key(surface):
                surface = re.sub(r"(?<=[A-Z])s$", "", surface)
                short_forms[k][surface] += 1
            else:
                surfaces[k][surface] += 1
            if res.why and surface not in why[k]:
                why[k][surface] = res.why.replace("this paper", p.record.id)
            key_papers[k].add(p.record.id)
        resolved.append(keys)

    ents: dict[str, dict] = {}
    for k, votes in type_votes.items():
        ty = min(votes.items(), key=lambda kv: (-kv[1], TYPE_PRIORITY[kv[0]]))[0]
        # Corpus-level consistency: a name whose own words settle its type ("... language models", a known
        # dataset) gets that type, whatever a tagger voted in context.
        ty = strong_type(k) or ty
        if _is_noise(k, ty, len(key_papers[k])):
            continue
        # The most used full form names the node; lower case wins a tie, so "Large ..." at a sentence start does
        # not beat "large ..." elsewhere. A short form names it only where papers hardly write anything else
        # and it is a versioned name ("GPT-4", not the "Generative Pre-trained Transformer 4" one paper spells out).
        names = surfaces[k]
        versioned = Counter({f: n for f, n in short_forms[k].items() if any(c.isdigit() for c in f)})
        if not names or versioned.total() >= SHORT_NAME_RATIO * names.total():
            names = (short_forms[k] if not names else versioned) + names
        name = min(names.items(), key=lambda kv: (-kv[1], not kv[0].islower(), kv[0]))[0]
        aliases = sorted((set(surfaces[k]) | set(short_forms[k])) - {name})
        forms = why.get(k, {})
        alias_why = [forms.get(a) or ("same name" if canonical_key(a) == canonical_key(name) else
                                      f"what {name} stands for" if a in surfaces[k] and name in short_forms[k]
                                      else "spelling variant") for a in aliases]
        ents[k] = {"id": entity_id(k), "label": ENTITY_LABELS[ty], "type": ty, "name": name, "aliases": aliases,
                   "alias_why": alias_why, "key": k, "mention_count": sum(votes.values()),
                   "paper_count": len(key_papers[k])}

    del type_votes, surfaces, short_forms, key_papers, why  # per-key tallies: only ``ents`` is needed from here on
    for e in ents.values():
        g.add_node(e["id"], **e)

    # Pass 2: papers, authors, venues and evidence-carrying edges.
    paper_entities: dict[str, set[str]] = {}
    titles = TitleBook()  # ids in order, so the same papers get the same labels
    texts = TextIndexBuilder(len(ids), embeddings)
    for p, keys in zip(plist(), resolved, strict=True):
        r = p.record
        ext, slots = extended(p)
        texts.add(r.id, r)
        title = titles.take(r.title) if r.title else titles.label(r.id, r.abstract, ext)
        g.add_node(r.id, label="Paper", id=r.id, name=title, title=title, abstract=r.abstract, year=r.year,
                   venue=r.venue, authors=list(r.authors), entity_count=0)
        if r.published is not None:  # absent rather than null, as Neo4j holds it
            g.nodes[r.id]["published"] = r.published
        if not r.title:  # a display title made from the abstract: Cypher users can tell it from a real one
            g.nodes[r.id]["title_generated"] = True
        sent_text = [r.abstract[s:e] for s, e in ext.sentences]
        per_entity: dict[str, tuple[str, Mention, int]] = {}
        for m, k in zip(ext.entities, keys, strict=True):
            if k not in ents:
                continue
            eid = ents[k]["id"]
            edge = "PROPOSES" if m.proposed else PAPER_EDGE_FOR_TYPE[ents[k]["type"]]
            prev = per_entity.get(eid)
            if prev is None:
                per_entity[eid] = (edge, m, 1)
            else:
                best = "PROPOSES" if "PROPOSES" in (prev[0], edge) else prev[0]
                per_entity[eid] = (best, m if (best == edge and prev[0] != best) else prev[1], prev[2] + 1)
        for eid, (edge, m, count) in sorted(per_entity.items()):
            g.add_edge(r.id, eid, key=edge, type=edge, paper_id=r.id, sentence=sent_text[m.sent] if sent_text else "",
                       start=m.start, end=m.end, mentions=count)
        g.nodes[r.id]["entity_count"] = len(per_entity)
        paper_entities[r.id] = set(per_entity)
        for rel in ext.relations:
            hk, tk = keys[rel.head], keys[rel.tail]
            if hk not in ents or tk not in ents or hk == tk:
                continue
            h, t = ext.entities[rel.head], ext.entities[rel.tail]
            sent = t.sent if rel.type == "EVALUATED_ON" and h.sent != t.sent else h.sent
            g.add_edge(ents[hk]["id"], ents[tk]["id"], key=f"{rel.type}|{r.id}", type=rel.type, paper_id=r.id,
                       sentence=sent_text[sent] if sent_text else "", start=min(h.start, t.start),
                       end=max(h.end, t.end))
        if ext.results:
            _add_results(g, r, ext, slots, keys, ents, sent_text)
        for name in r.authors:
            aid = _slug("author:", name)
            if aid not in g:
                g.add_node(aid, label="Author", id=aid, name=name, paper_count=0)
            g.nodes[aid]["paper_count"] += 1
            g.add_edge(aid, r.id, key="AUTHORED", type="AUTHORED")
        if r.venue:
            vid = _slug("venue:", r.venue)
            if vid not in g:
                g.add_node(vid, label="Venue", id=vid, name=r.venue, paper_count=0)
            g.nodes[vid]["paper_count"] += 1
            g.add_edge(r.id, vid, key="PUBLISHED_IN", type="PUBLISHED_IN", year=r.year)

    text = texts.finish()
    g.graph["text_index"] = text
    sim = PaperSimilarity(RelatedIndex(paper_entities), text)
    for pid, top in sim.all_related(related_k):
        for q, score, dense, lexical, shared in top:
            g.add_edge(pid, q, key="RELATED_TO", type="RELATED_TO", score=score, text_similarity=dense,
                       word_similarity=lexical, shared=sim.specific(shared)[:5])
    text.release()
    return g


def _add_results(g: nx.MultiDiGraph, r: PaperRecord, ext: Extraction, slots: list[SlotLinks], keys: list[str],
                 ents: Mapping[str, Mapping[str, object]], sent_text: list[str]) -> None:
    """The paper's reported results: a Result node each, ``(:Paper)-[:REPORTS]->(:Result)`` and the result's
    edges to the entities naming its system, dataset and metric. A result that names no system is the paper's
    one proposed entity's, when it proposes exactly one."""
    def entity_of(i: int | None) -> str | None:
        return str(ents[keys[i]]["id"]) if i is not None and keys[i] in ents else None

    proposed = {str(ents[k]["id"]) for m, k in zip(ext.entities, keys, strict=True) if m.proposed and k in ents}
    text = r.abstract
    for n, (res, links) in enumerate(zip(ext.results, slots, strict=True)):
        if not 0 <= res.start < res.end <= len(text):
            continue
        rid = f"result:{r.id}:{n}"
        written = text[res.start : res.end]
        value, unit = parse_value(written)
        said = {slot: text[span[0] : span[1]] for slot, span in
                (("system", res.system), ("dataset", res.dataset), ("metric", res.metric)) if span is not None}
        attrs: dict[str, object] = {
            "label": RESULT_LABEL, "id": rid,
            "name": result_name(written, said.get("metric"), said.get("system"), said.get("dataset")),
            "text": written, "unit": unit, "kind": res.kind, **said,
            "sentence": sent_text[res.sent] if 0 <= res.sent < len(sent_text) else "",
            "start": res.start, "end": res.end, "paper": r.id}
        if value is not None:  # absent rather than null, as Neo4j holds it
            attrs["value"] = value
        if r.year is not None:
            attrs["year"] = r.year
        g.add_node(rid, **attrs)
        g.add_edge(r.id, rid, key="REPORTS", type="REPORTS", paper_id=r.id)
        system = entity_of(links.system)
        if system is None and res.system is None and len(proposed) == 1:
            system = next(iter(proposed))
        for slot, target in (("system", system), ("dataset", entity_of(links.dataset)),
                             ("metric", entity_of(links.metric))):
            if target is not None:
                edge = RESULT_EDGES[slot]
                g.add_edge(rid, target, key=edge, type=edge, paper_id=r.id)


class TextIndexBuilder:
    """The text index of papers added in id order, built as they stream by: embeddings re-used by input hash
    where ``embeddings`` has them (a rebuild embeds only new or changed records) or computed a batch at a
    time, rounded to float16 as every store keeps them, and each paper's TF-IDF terms."""

    def __init__(self, n: int, embeddings: Mapping[str, np.ndarray] | None = None) -> None:
        from kg.embed import default_embedder

        self.embedder = default_embedder()
        self.embeddings = embeddings or {}
        self.ids: list[str] = []
        self.dense = np.zeros((n, self.embedder.dims), dtype=np.float16)
        self.todo: list[tuple[int, str]] = []
        self.tfidf = TfidfBuilder()

    def add(self, pid: str, record: PaperRecord, vector: np.ndarray | None = None) -> None:
        """Add the next paper; ``vector``, when given, is its stored embedding (else looked up by input hash)."""
        from kg.cache import record_hash
        from kg.embed import paper_text

        i = len(self.ids)
        self.ids.append(pid)
        text = paper_text(record.title, record.abstract)
        v = vector if vector is not None else self.embeddings.get(record_hash(record)) if self.embeddings else None
        if v is not None and len(v) == self.embedder.dims:
            self.dense[i] = v
        else:
            self.todo.append((i, text))
            if len(self.todo) >= 256:
                self._embed()
        self.tfidf.add(text)

    def _embed(self) -> None:
        if self.todo:
            self.dense[[i for i, _ in self.todo]] = self.embedder.embed([t for _, t in self.todo])
            self.todo = []

    def finish(self) -> TextIndex:
        self._embed()
        return TextIndex(self.ids, self.dense[: len(self.ids)].astype(np.float32), self.tfidf.finish(),
                         embedder=self.embedder.name)


def build_text_index(records: Iterable[tuple[str, PaperRecord]],
                     embeddings: Mapping[str, np.ndarray] | None = None) -> TextIndex:
    """The text index of papers given in id order (``TextIndexBuilder``)."""
    recs = list(records)
    b = TextIndexBuilder(len(recs), embeddings)
    for pid, r in recs:
        b.add(pid, r)
    return b.finish()
