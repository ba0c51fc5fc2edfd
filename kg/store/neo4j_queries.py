"""Every Cypher statement the Neo4j store sends: parameterised, Neo4j 5 syntax, writes batched via UNWIND.

Values always travel as parameters. Labels and relationship types cannot be parameters in Cypher, so the
few templates that need one take it through ``ident``, which accepts only plain identifiers.
"""

from __future__ import annotations

import re

from kg.graph import ENTITY_LABELS, PAPER_EDGE_TYPES
from kg.reported import RESULT_LABEL

ENTITY_LABEL_NAMES = tuple(ENTITY_LABELS.values())
LABELS = ("Paper", *ENTITY_LABEL_NAMES, "Author", "Venue", RESULT_LABEL)
INPUT_PROP = "_input"  # a Paper's record and extraction (JSON), kept so later builds can re-derive
EMBEDDING_PROP = "_embedding"  # a Paper's embedding (kg.embed), for related papers and search by meaning
EMBEDDER_PROP = "_embedder"  # the embedder that made it: another one's vectors are never compared with this one's
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PAPER_EDGES = "|".join(PAPER_EDGE_TYPES)
_ENTITIES = "|".join(ENTITY_LABEL_NAMES)
# Map projections that leave out what a read does not need: kg's private input blob and, for nodes
# seen only as neighbours, the abstract. Null-valued keys are dropped on arrival (Neo4j stores no nulls).
_HIDDEN = f"{INPUT_PROP}: null, {EMBEDDING_PROP}: null, {EMBEDDER_PROP}: null"
NODE = f"n {{.*, {_HIDDEN}}}"
BRIEF = f"m {{.*, abstract: null, {_HIDDEN}}}"


def ident(name: str) -> str:
    """``name`` as a quoted Cypher identifier; anything but a plain identifier is refused."""
    if not _IDENT.fullmatch(name):
        raise ValueError(f"not a plain label or relationship type: {name!r}")
    return f"`{name}`"


# -- schema --------------------------------------------------------------------------------------------
def unique_id_constraint(label: str) -> str:
    """Neo4j 5 syntax; the constraint is backed by a range index on ``id``, so lookups by id are seeks."""
    return (f"CREATE CONSTRAINT kg_{label.lower()}_id IF NOT EXISTS "
            f"FOR (n:{ident(label)}) REQUIRE n.id IS UNIQUE")


# -- writes ----------------------------------------------------------------------------------------------
def merge_nodes(label: str) -> str:
    """Rows ``{id, props}``; ``SET n = props`` replaces every property, so dropped attributes disappear."""
    return f"UNWIND $rows AS row MERGE (n:{ident(label)} {{id: row.id}}) SET n = row.props"


def merge_rels(start_label: str, rel_type: str, end_label: str, *, per_paper: bool) -> str:
    """Rows ``{s, e, pid, props}``. Edges stated per paper are merged on (start, type, paper_id, end)."""
    key = " {paper_id: row.pid}" if per_paper else ""
    return (f"UNWIND $rows AS row "
            f"MATCH (a:{ident(start_label)} {{id: row.s}}) MATCH (b:{ident(end_label)} {{id: row.e}}) "
            f"MERGE (a)-[r:{ident(rel_type)}{key}]->(b) SET r = row.props")


# What a write may replace: nodes with a kg label and the relationships leaving them ($labels).
EXISTING_NODES = ("MATCH (n) WHERE any(l IN labels(n) WHERE l IN $labels) "
                  "RETURN elementId(n) AS eid, labels(n) AS labels, n.id AS id")
EXISTING_RELS = ("MATCH (a)-[r]->(b) WHERE any(l IN labels(a) WHERE l IN $labels) "
                 "RETURN elementId(r) AS eid, a.id AS s, type(r) AS type, r.paper_id AS pid, b.id AS e")
DELETE_NODES = "UNWIND $ids AS eid MATCH (n) WHERE elementId(n) = eid DETACH DELETE n"
DELETE_RELS = "UNWIND $ids AS eid MATCH ()-[r]->() WHERE elementId(r) = eid DELETE r"

# -- the build lock (kg/store/neo4j_lock.py): one KgLock node per database, expiring on the server's clock ------
LOCK_LABEL = "KgLock"  # not among LABELS: a graph write neither reads nor deletes it
TAKE_LOCK = ("CREATE (l:KgLock {id: $id, token: $token, holder: $holder, expires: timestamp() + $lease_ms}) "
             "RETURN l.token AS token")
LOCK_HOLDERS = ("MATCH (l:KgLock {id: $id}) "
                "RETURN l.token AS token, l.holder AS holder, l.expires - timestamp() AS left_ms")
RENEW_LOCK = ("MATCH (l:KgLock {id: $id}) WHERE l.token = $token SET l.expires = timestamp() + $lease_ms "
              "RETURN count(l) AS n")
RELEASE_LOCK = "MATCH (l:KgLock {id: $id}) WHERE l.token = $token DELETE l"
EXPIRE_LOCK = "MATCH (l:KgLock {id: $id}) WHERE l.expires < timestamp() DELETE l"

# -- whole-graph reads -------------------------------------------------------------------------------------
COUNTS = ("CALL { MATCH (n) RETURN count(n) AS nodes } CALL { MATCH ()-[r]->() RETURN count(r) AS rels } "
          "RETURN nodes, rels")
ALL_NODES = f"MATCH (n) WHERE any(l IN labels(n) WHERE l IN $labels) RETURN labels(n)[0] AS label, {NODE} AS props"
ALL_RELS = ("MATCH (a)-[r]->(b) WHERE any(l IN labels(a) WHERE l IN $labels) "
            "RETURN a.id AS s, type(r) AS type, properties(r) AS props, b.id AS e")
IDS_OF = "UNWIND $eids AS eid MATCH (n) WHERE elementId(n) = eid RETURN eid, n.id AS id"
NODE_COUNTS = "MATCH (n) RETURN labels(n) AS labels, count(*) AS n"
REL_COUNTS = "MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n"
PAPER_INPUTS = f"MATCH (p:Paper) RETURN p.id AS id, p.{INPUT_PROP} AS input"
ENTITIES = f"MATCH (n:{_ENTITIES}) RETURN labels(n)[0] AS label, n {{.*}} AS props"
# Every paper with the entities it links to: the postings of the related-papers index.
PAPER_ENTITY_IDS = f"MATCH (p:Paper) OPTIONAL MATCH (p)-[:{_PAPER_EDGES}]->(e) RETURN p.id AS id, collect(e.id) AS es"


# -- reads of part of the graph (rows: source id, type, properties, other end) --------------------------
# Patterns start at the node looked up by id: some planners (ArcadeDB's) expand left to right.
def nodes_by_id(label: str, *, brief: bool = False) -> str:
    proj = BRIEF.replace("m {", "n {") if brief else NODE
    return f"UNWIND $ids AS id MATCH (n:{ident(label)} {{id: id}}) RETURN labels(n)[0] AS label, {proj} AS props"


def incident(label: str, *, paper_edges_only: bool = False) -> str:
    """Each relationship at the nodes ``$ids``, in its stored direction, with the far node in brief."""
    types = f":{_PAPER_EDGES}" if paper_edges_only else ""
    return (f"UNWIND $ids AS id MATCH (n:{ident(label)} {{id: id}})-[r{types}]-(m) "
            f"RETURN startNode(r).id AS s, type(r) AS type, properties(r) AS props, endNode(r).id AS e, "
            f"labels(m)[0] AS label, {BRIEF} AS node")


def edges_among(label: str) -> str:
    """Relationships from the ``label`` nodes ``$ids`` to any node in ``$among``."""
    return (f"UNWIND $ids AS id MATCH (n:{ident(label)} {{id: id}})-[r]->(m) WHERE m.id IN $among "
            f"RETURN n.id AS s, type(r) AS type, properties(r) AS props, m.id AS e")


def papers_to(label: str) -> str:
    """Paper edges into the ``label`` entities ``$ids``, with the paper in brief (co-occurrence, overview)."""
    return (f"UNWIND $ids AS id MATCH (n:{ident(label)} {{id: id}})<-[r:{_PAPER_EDGES}]-(m:Paper) "
            f"RETURN m.id AS s, type(r) AS type, properties(r) AS props, n.id AS e, 'Paper' AS label, "
            f"{BRIEF} AS node")


def co_papers(label: str) -> str:
    """The papers of entity ``$id`` and every paper edge out of them (two MATCHes: the edge to ``$id`` too)."""
    return (f"MATCH (x:{ident(label)} {{id: $id}})<-[:{_PAPER_EDGES}]-(p:Paper) MATCH (p)-[r:{_PAPER_EDGES}]->(m) "
            f"RETURN p.id AS s, type(r) AS type, properties(r) AS props, m.id AS e, labels(m)[0] AS label, "
            f"{BRIEF} AS node, p {{.*, abstract: null, {_HIDDEN}}} AS paper")


_PAPER_FILTER = ("($year IS NULL OR n.year = $year) "
                 "AND all(t IN $terms WHERE toLower(n.title + ' ' + n.abstract) CONTAINS t)")


def list_papers(*, with_abstract: bool) -> str:
    """Papers by year and words (lower-cased here, re-checked exactly in Python)."""
    proj = NODE if with_abstract else BRIEF.replace("m {", "n {")
    return f"MATCH (n:Paper) WHERE {_PAPER_FILTER} RETURN {proj} AS props"


def list_papers_of(label: str, *, with_abstract: bool) -> str:
    """As ``list_papers``, among the papers linked to entity ``$entity``; with the linking edges."""
    proj = NODE if with_abstract else BRIEF.replace("m {", "n {")
    return (f"MATCH (x:{ident(label)} {{id: $entity}})<-[r:{_PAPER_EDGES}]-(n:Paper) WHERE {_PAPER_FILTER} "
            f"RETURN {proj} AS props, type(r) AS type, properties(r) AS rprops")
# Papers that may score in a search: a term in the abstract, a stem of one in the title, or an edge to an
# entity whose name matches the query. Scoring happens in Python, on these candidates only.
SEARCH_PAPERS = (f"MATCH (n:Paper) WHERE any(t IN $terms WHERE toLower(n.abstract) CONTAINS t) "
                 f"OR any(s IN $stems WHERE toLower(n.title) CONTAINS s) "
                 f"OR EXISTS {{ MATCH (n)-->(x) WHERE x.id IN $entities }} RETURN {NODE} AS props")
SEARCH_PAPER_EDGES = ("UNWIND $papers AS pid MATCH (p:Paper {id: pid})-[r]->(x) WHERE x.id IN $entities "
                      "RETURN p.id AS s, type(r) AS type, properties(r) AS props, x.id AS e")

# -- exploring a field: the inputs of the trend and full-text indexes, cached like the related-papers index -----
PAPER_DATES = "MATCH (p:Paper) RETURN p.id AS id, p.year AS year, p.published AS published"
# Every paper's text and embedding: the text index of related papers and search by meaning.
PAPER_EMBEDDINGS = ("MATCH (p:Paper) RETURN p.id AS id, p.title AS title, p.title_generated AS title_generated, "
                    f"p.abstract AS abstract, p.{EMBEDDING_PROP} AS embedding, p.{EMBEDDER_PROP} AS embedder")


def vector_index(dims: int) -> str:
    """Neo4j 5.11+'s vector index over the papers' embeddings (kg scores in kg; this serves users' own queries)."""
    return (f"CREATE VECTOR INDEX kg_paper_embedding IF NOT EXISTS FOR (p:Paper) ON (p.{EMBEDDING_PROP}) "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dims)}, `vector.similarity_function`: 'cosine'}}}}")


PAPER_TEXTS = ("MATCH (p:Paper) RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year, "
               "p.venue AS venue")
