"""The embedded store: a NetworkX graph persisted as one snapshot file in a directory, replaced atomically."""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import networkx as nx
import numpy as np
import orjson

from kg.cache import CachedInputs, ExtractionCache, record_hash
from kg.embed import default_embedder
from kg.errors import StoreError
from kg.extract.pipeline import EXTRACTOR_VERSION
from kg.files import kind_of, odd_file, open_regular
from kg.fulltext import FULLTEXT_DIR, FullTextIndex
from kg.graph import PaperInput, with_dates
from kg.related import RelatedIndex, TextIndex
from kg.resolve import OVERRIDES_FILE
from kg.store import filelock
from kg.store.base import StoreOptions
from kg.store.nxreads import NxReads, entity_name_keys, graph_text_index, paper_entity_map
from kg.store.snapshot import READABLE, SNAPSHOT_FILE, Snapshot, rebuild_hint, source_identity, write_snapshot
from kg.store.snapshot import VERSION as SNAPSHOT_VERSION

log = logging.getLogger(__name__)
FORMAT = "kg-graph"
FORMAT_VERSION = 3
GRAPH_FILE = "graph.jsonl"
INPUTS_FILE = "inputs.jsonl"
LOCK_FILE = ".lock"
SAVING_FILE = ".saving"  # present from the moment a build starts saving the graph until its snapshot is in place
OLDER_GRAPH_FILES = (GRAPH_FILE, "graph.json")  # what older kgs kept the graph in: superseded by a v4 snapshot


def write_graph(g: nx.MultiDiGraph, papers: Mapping[str, str], fh: BinaryIO) -> None:
    """The graph as JSON Lines, written as a stream (no second copy of the graph in memory): what stores made
    by kg before snapshot version 4 kept beside their snapshot, now read only to open or upgrade such a store.

    Line 1: ``{"format": "kg-graph", "version": 3, "papers": {id: content hash}}``; then one line per node,
    ``["n", {properties, "id", "label"}]``; one per paper whose sentences are evidence, ``["s", paper_id,
    [sentence, ...]]``; one per edge, ``["e", source, target, key, {properties, "type"}]``. Evidence sentences
    are stored once per paper and edges refer to them by index (``"sent"``): a sentence is evidence for many
    edges. Everything is sorted, so the same graph is the same bytes.
    """
    dumps = orjson.dumps
    fh.write(dumps({"format": FORMAT, "version": FORMAT_VERSION, "papers": dict(sorted(papers.items()))}) + b"\n")
    for n in sorted(g.nodes):
        fh.write(dumps(["n", g.nodes[n]]) + b"\n")
    sentences: dict[str, dict[str, int]] = {}
    for _u, _v, _k, d in g.edges(keys=True, data=True):
        if "sentence" in d:
            table = sentences.setdefault(d["paper_id"], {})
            table.setdefault(d["sentence"], len(table))
    for pid in sorted(sentences):
        fh.write(dumps(["s", pid, list(sentences[pid])]) + b"\n")
    for u in sorted(g.nodes):
        for v, keydict in sorted(g.succ[u].items()):
            for k, d in sorted(keydict.items()):
                if "sentence" in d:
                    d = {**d, "sent": sentences[d["paper_id"]][d["sentence"]]}
                    del d["sentence"]
                fh.write(dumps(["e", u, v, k, d]) + b"\n")


def read_graph(fh: BinaryIO, where: str) -> tuple[nx.MultiDiGraph, dict[str, str]]:
    """Load a graph written by ``write_graph``, one line at a time."""
    header = _header(fh.readline(), where)
    g = nx.MultiDiGraph()
    node, succ, pred = g._node, g._succ, g._pred  # bulk load: the public add_* calls copy every dict
    sentences: dict[str, list[str]] = {}
    intern = sys.intern
    for n, line in enumerate(fh, 2):
        try:
            rec = orjson.loads(line)
            kind = rec[0]
            if kind == "e":
                _, u, v, k, d = rec
                if "sent" in d:
                    pid = d["paper_id"] = intern(d["paper_id"])
                    d["sentence"] = sentences[pid][d.pop("sent")]
                d["type"] = intern(d["type"])
                keydict = succ[u].get(v)
                if keydict is None:
                    keydict = succ[u][v] = pred[v][u] = {}
                keydict[k] = d
            elif kind == "n":
                attrs = rec[1]
                nid = intern(attrs["id"])
                attrs["label"] = intern(attrs["label"])
                node[nid] = attrs
                succ[nid] = {}
                pred[nid] = {}
            elif kind == "s":
                sentences[intern(rec[1])] = rec[2]
        except (orjson.JSONDecodeError, KeyError, ValueError, IndexError, TypeError) as exc:
            raise StoreError(f"{where}:{n}: damaged graph file ({type(exc).__name__}); rebuild the store") from None
    return g, header["papers"]


def read_papers(path: Path) -> dict[str, str]:
    """The stored papers (id -> input hash) from the first line of ``graph.jsonl``, without reading the graph."""
    with open_regular(path) as fh:
        return dict(_header(fh.readline(), str(path))["papers"])


def _header(line: bytes, where: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT or not isinstance(obj.get("papers"), dict):
        raise StoreError(f"{where}: not a kg graph file")
    if obj.get("version") != FORMAT_VERSION:
        raise StoreError(f"{where}: graph format version {obj.get('version')} is not supported by this kg; "
                         f"rebuild the store")
    return obj


def _older_papers(path: Path) -> dict[str, str] | None:
    """The papers of a version-1/2 store (``graph.json``), so a build can upgrade it in place."""
    old = path / "graph.json"
    if not old.exists():
        return None
    try:
        with open_regular(old) as fh:
            obj = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    if isinstance(obj, dict) and obj.get("format") == FORMAT and isinstance(obj.get("papers"), dict):
        return obj["papers"]
    return None


def _atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write to a temporary file, fsync, then rename over ``path``: a crash leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb", buffering=1 << 20) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable."""
    dir_fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class _NewerSnapshot(StoreError):
    """A snapshot of a format this kg does not know: a build must not overwrite it with an older format."""


# What belongs in a store folder, and what to do when something else is in its place.
_FILES = {
    SNAPSHOT_FILE: "the store's graph; remove it, then {hint}",
    INPUTS_FILE: "the store's extraction log; remove it, then build the store again from all its inputs (every "
                 "paper is extracted again)",
    GRAPH_FILE: "the graph of a store made by an older kg; remove it, then {hint}",
    "graph.json": "the graph of a store made by an older kg; remove it, then {hint}",
    SAVING_FILE: "a mark a build leaves while saving; remove it",
    OVERRIDES_FILE: "the store's entity-resolution overrides; remove it, then give them again with "
                    "`kg build --overrides FILE`",
}


def check_folder(path: Path) -> None:
    """One clear StoreError when the store folder, or a file kg keeps in it, is something else in its place (a
    FIFO, a device, a directory, a dangling link): reading it would hang, never end, or fail with a traceback.
    Only ``stat``: nothing is opened."""
    if os.path.lexists(path) and not path.is_dir():
        raise StoreError(f"{path} is {odd_file(path) or 'a file'}, not a store folder; name a folder with "
                         f"--store-dir")
    for name, why in _FILES.items():
        what = odd_file(path / name)
        if what is not None:
            why = why.format(hint=rebuild_hint(path))
            raise StoreError(f"{path / name} is {what}, not a regular file: kg keeps {why}")
    full = path / FULLTEXT_DIR
    if os.path.lexists(full) and not full.is_dir():
        raise StoreError(f"{full} is {odd_file(full) or kind_of(os.lstat(full).st_mode)}, not a folder: kg keeps "
                         f"the store's full-text index there; remove it, then {rebuild_hint(path)}")


def _record(sfile: Path, *, verify: bool) -> Snapshot | None:
    """The store's snapshot if it is the store's record of its graph (version 4 on), else None (none there, or
    the copy of ``graph.jsonl`` an older kg wrote, which the legacy reader judges)."""
    if not sfile.exists():
        return None
    try:
        snap = Snapshot(sfile, verify=verify)
    except StoreError:
        if (sfile.parent / GRAPH_FILE).exists():  # an older store: graph.jsonl is its record
            return None
        raise
    except OSError as exc:
        raise StoreError(f"{sfile}: cannot be read ({exc})") from None
    if not snap.is_record:
        return None
    if snap.version not in READABLE:
        raise _NewerSnapshot(f"{sfile} is snapshot format version {snap.version}, made by a newer kg; this kg "
                             f"reads versions {', '.join(map(str, READABLE))}")
    return snap


def _no_graph(path: Path) -> str:
    if (path / SAVING_FILE).exists():
        return (f"{path}: the first `kg build` into this store was stopped while saving, so it holds no graph yet; "
                f"run that build again (its extractions are kept)")
    return f"{path}: no graph here yet; build one with `kg build PATH --store-dir {path}`"


def _frozen(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A served graph never changes: its objects leave the cyclic garbage collector's generations, so a
    collection during a query no longer walks millions of node and edge dicts (40 % of a query's time before)."""
    gc.freeze()
    return graph


class EmbeddedStore(NxReads):
    """A store directory: ``graph.snapshot`` (the graph), ``inputs.jsonl`` (extraction log), ``fulltext/``,
    ``.lock``. A store made by an older kg (``graph.jsonl`` beside a snapshot of version 3, or ``graph.json``)
    is read as it is and saved in the current format by the next build or ``kg upgrade``.

    Open with ``writable=True`` to build: that takes an exclusive lock, so a second build into the same
    directory fails at once with a clear message instead of interleaving writes.
    """

    kind = "embedded"

    @classmethod
    def open(cls, options: StoreOptions, *, writable: bool = False, wait: bool = False) -> EmbeddedStore:
        return cls(options.store_dir, writable=writable, wait=wait)

    def __init__(self, path: str | os.PathLike[str], *, writable: bool = False, wait: bool = False) -> None:
        self.path = Path(path)
        self.writable = writable
        self._lock_fd: int | None = None
        check_folder(self.path)
        if writable:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file where a folder of the path belongs, no permission
                raise StoreError(f"{self.path}: cannot make the store folder ({exc.strerror or exc})") from None
            self._lock(wait)
            self._remove_stale_temporaries()
        try:
            self._open(writable)
        except BaseException:
            self.close()  # a build refused here must not keep the lock
            raise

    def _open(self, writable: bool) -> None:
        self.cache = ExtractionCache(self.path / INPUTS_FILE, EXTRACTOR_VERSION)
        self._papers: dict[str, str] = {}
        self._graph: nx.MultiDiGraph | None = None
        self._snapshot: Snapshot | None = None
        self.loaded_from: str | None = None  # "snapshot" or "graph.jsonl", once the graph is read
        self.legacy: str | None = None  # what an older kg left: the next save rewrites it in the current format
        self.damaged: str | None = None  # why the snapshot cannot be read, when a build derives it again
        self._fulltext_damage: str | None = None  # why the full-text index cannot be opened, once found
        # The snapshot is the record (since version 4); a build only checks and reads its list of papers.
        recovered = False
        try:
            self._record = _record(self.path / SNAPSHOT_FILE, verify=not writable)
            if self._record is not None:
                self._papers = self._record.papers()
        except _NewerSnapshot:
            raise
        except StoreError as exc:
            if not writable:
                raise
            self._recover(str(exc))
            recovered = True
        gfile = self.path / GRAPH_FILE
        if recovered:
            self._graph = nx.MultiDiGraph()  # until the build's graph replaces it
        elif self._record is not None:
            if writable:  # an upgrade killed after its snapshot was in place left these: a second copy, stale
                self._remove_older_graph_files()
        elif gfile.exists():
            self._papers = read_papers(gfile)
            self.legacy = f"{GRAPH_FILE} and {SNAPSHOT_FILE} format 3"
        elif writable and (old := _older_papers(self.path)):
            # A store written by an older kg: its papers and the extraction log are enough to re-derive.
            self._papers = old
            self.legacy = "graph.json"
        elif not writable:
            raise StoreError(_no_graph(self.path))
        else:
            self._graph = nx.MultiDiGraph()
        super().__init__(self._graph)
        if not writable:
            self.graph  # noqa: B018 - a served store reads its graph now, so damage shows at start, not mid-request

    def _recover(self, why: str) -> None:
        """A build into a store whose snapshot cannot be read: its papers are those of the extraction log (the
        last line of each), and the build derives the graph from them again, as it always does, and saves it
        over the damaged snapshot. Refused when the log holds no paper, which would leave a store of only this
        build's papers."""
        why = why.split("; rebuild the store")[0].split("; remove it")[0]
        papers = self.cache.latest_papers()
        if not papers:
            raise StoreError(f"{why}; its extraction log {self.cache.path} holds no paper to derive the store "
                             f"from: remove {SNAPSHOT_FILE} and build the store again from all its inputs")
        self.damaged = why
        self._record = None
        self._papers = papers

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The stored graph, read on first use: a build only needs the stored papers' hashes, not their graph."""
        if self._graph is None:
            self._graph = with_dates(self._read_graph())
        return self._graph

    @graph.setter
    def graph(self, value: nx.MultiDiGraph | None) -> None:
        self._graph = value

    def _read_graph(self) -> nx.MultiDiGraph:
        gfile, sfile = self.path / GRAPH_FILE, self.path / SNAPSHOT_FILE
        if self._record is not None:
            if (self.path / SAVING_FILE).exists():
                log.warning("%s: the last `kg build` into this store was stopped while saving; this is the graph "
                            "of the build before it. Run that build again to finish it (its extractions are kept).",
                            self.path)
            if self.writable:
                self._record._verify()  # a build opened it checking only its list of papers
            graph = self._record.graph()
            self._snapshot = self._record
            self.loaded_from = "snapshot"
            return _frozen(graph)
        return self._read_legacy(gfile, sfile)

    def _read_legacy(self, gfile: Path, sfile: Path) -> nx.MultiDiGraph:
        """The graph of a store made by kg before snapshot version 4: ``graph.jsonl`` and its snapshot."""
        why = f"there is no {SNAPSHOT_FILE} (a store built by an older kg)"
        if (self.path / SAVING_FILE).exists():
            why = (f"the last `kg build` into this store was stopped while saving, before it wrote {SNAPSHOT_FILE} "
                   f"({GRAPH_FILE} is whole)")
        if sfile.exists():
            try:
                snap = Snapshot(sfile)
                if snap.version != 3:
                    why = (f"{sfile} is format version {snap.version}, this kg reads versions "
                           f"{', '.join(map(str, READABLE))}")
                elif snap.header.get("source") == source_identity(gfile):
                    graph = snap.graph()
                    self._snapshot = snap
                    self.loaded_from = "snapshot"
                    return _frozen(graph)
                else:
                    why = f"{sfile} does not match {GRAPH_FILE}"
            except (StoreError, OSError, KeyError, TypeError, ValueError) as exc:  # graph.jsonl is the record
                why = str(exc) if isinstance(exc, StoreError) else f"{sfile} cannot be read ({exc})"
        if self._papers and not self.writable:  # a writable store is being saved anew (a build, `kg upgrade`)
            log.warning("%s; reading %s instead (slower). The next `kg build` into this store, or `kg upgrade "
                        "--store-dir %s`, saves it in the current format.", why, GRAPH_FILE, self.path)
        with open_regular(gfile) as fh:
            graph, self._papers = read_graph(fh, str(gfile))
        self.loaded_from = GRAPH_FILE
        return _frozen(nx.freeze(graph))

    def _related_index(self) -> RelatedIndex:
        if self._related is None and self._snapshot is not None:
            self._related = self._snapshot.related_index()
        return super()._related_index()

    def _load_text_index(self) -> TextIndex:
        text = self._snapshot.text_index() if self._snapshot is not None else None
        if text is not None and text.embedder == default_embedder().name:
            return text
        # A store built before kg kept embeddings, or by another embedder: computed from the abstracts now (a
        # minute at 83k papers), until `kg build` or `kg upgrade` saves them.
        log.warning("%s: no embeddings of this kg's embedder stored; computing them (`kg upgrade --store-dir %s` "
                    "stores them)", self.path, self.path)
        return super()._load_text_index()

    def embeddings(self) -> dict[str, np.ndarray]:
        """The stored papers' embeddings by input hash: what a rebuild re-uses for unchanged records."""
        rec = self._record
        if rec is None or not rec.header.get("text"):
            return {}
        try:
            text = rec.text_index()
        except StoreError:
            return {}  # damaged: every paper is embedded again
        if text is None or text.embedder != default_embedder().name:
            return {}
        hashes = self._papers
        return {hashes[p]: text.dense[i] for i, p in enumerate(text.papers) if p in hashes}

    def _load_name_keys(self) -> dict[str, tuple[str, ...]]:
        # Keys made by older rules would miss names as today's queries spell them: those are made afresh.
        keys = self._snapshot.name_keys() if self._snapshot is not None else None
        return keys if keys is not None else super()._load_name_keys()

    def _lock(self, wait: bool) -> None:
        self._lock_fd = filelock.acquire(self.path, LOCK_FILE, wait)

    def _remove_stale_temporaries(self) -> None:
        # Left by a build killed mid-save (SIGKILL, power loss); safe to remove: we hold the write lock.
        for tmp in [*self.path.glob(f".{GRAPH_FILE}.tmp*"), *self.path.glob(f".{SNAPSHOT_FILE}.tmp*"),
                    *self.path.glob(f"{Path(INPUTS_FILE).stem}.tmp*")]:
            tmp.unlink(missing_ok=True)
        for tmp in (self.path / f".{FULLTEXT_DIR}.tmp", self.path / f".{FULLTEXT_DIR}.old"):
            shutil.rmtree(tmp, ignore_errors=True)

    def fixed(self) -> bool:
        return not self.writable  # a build writes it; nothing else does while it is open read-only

    def close(self) -> None:
        if self._lock_fd is not None:
            filelock.release(self._lock_fd)
            self._lock_fd = None

    def load_inputs(self) -> CachedInputs:
        """The stored papers' extractions, read from the log on demand (whatever extractor version made them:
        papers are re-derived from what they were extracted with)."""
        if self.damaged is not None:  # said here, where a build takes them, not when the store is opened
            log.warning("%s; deriving the store again from its extraction log (%s papers)", self.damaged,
                        f"{len(self._papers):,}")
        return CachedInputs(self.cache, self._papers)

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        if not self.writable:
            raise StoreError(f"{self.path}: store opened read-only")
        papers = (dict(inputs.hashes) if isinstance(inputs, CachedInputs)
                  else {pid: record_hash(p.record) for pid, p in inputs.items()})
        self._save(graph, papers)

    def upgrade(self) -> bool:
        """Save a store made by an older kg in the current format, its graph and extractions as they are; False
        if it already is. A snapshot whose name keys older ``canonical_key`` rules made is saved again with
        today's keys (the graph as it is), so opening it no longer makes them afresh."""
        if not self.writable:
            raise StoreError(f"{self.path}: store opened read-only")
        if self.damaged is not None:
            raise StoreError(f"{self.damaged}; `kg upgrade` saves a graph as it is, and this one cannot be read: "
                             f"{rebuild_hint(self.path)}")
        if self.legacy is None:
            compacted = self.cache.compact()
            text = (self._record.header.get("text") if self._record is not None else None) or {}
            current_text = text.get("embedder") == default_embedder().name
            if self._record is None:
                return compacted
            if self._record.keys_current and current_text and self._record.version == SNAPSHOT_VERSION:
                if FullTextIndex.current(self.path / FULLTEXT_DIR):
                    return compacted
                # written by a kg before the index's checksums: written again (the graph is the same)
                self._explore()["fulltext"] = self._write_fulltext(self.graph, self._record.identity())
                return True
            self._save(self.graph, dict(self._papers))
            return True
        if self.legacy == "graph.json":
            raise StoreError(f"{self.path}: made by a kg older than graph.jsonl; `kg build` it again from its input")
        graph = self.graph
        self._save(graph, dict(self._papers))
        return True

    def _remove_older_graph_files(self) -> None:
        for name in OLDER_GRAPH_FILES:
            (self.path / name).unlink(missing_ok=True)

    def _save(self, graph: nx.MultiDiGraph, papers: dict[str, str]) -> None:
        sfile = self.path / SNAPSHOT_FILE
        if self.legacy is not None:
            log.warning("%s: a store made by an older kg (%s); saving it in the current format: %s alone, the "
                        "extraction log compressed (`kg export --format jsonl` writes a portable copy of the graph)",
                        self.path, self.legacy, SNAPSHOT_FILE)
        # Until the new snapshot is in place: a build killed meanwhile is named as such by the next command, which
        # serves the previous graph (the snapshot is replaced by a rename, so it is always one graph or the other).
        saving = self.path / SAVING_FILE
        saving.touch()
        _fsync_dir(self.path)
        with_dates(graph, as_text=True)  # files hold dates as ISO text
        related = RelatedIndex(paper_entity_map(graph))
        text = graph_text_index(graph)
        keys = entity_name_keys(graph)
        identity: dict[str, Any] = {}
        _atomic_write(sfile, lambda fh: identity.update(write_snapshot(graph, related, keys, papers, fh, text=text)))
        saving.unlink()
        if self.legacy is not None:
            self._remove_older_graph_files()  # superseded by the snapshot now in place
            self.cache.compact()  # the same lines, compressed: a kill leaves one log or the other, both whole
        _fsync_dir(self.path)
        # Written for this snapshot (named by its identity): a kill before it is in place leaves the previous
        # index, which no longer matches and is rebuilt in memory when first used.
        fulltext = self._write_fulltext(graph, identity)
        self.legacy = self.damaged = self._fulltext_damage = None
        self._papers = papers
        self._record = self._snapshot = None
        self.set_graph(with_dates(graph))  # written as text above; a date for Cypher from here on
        self._related, self._keys, self._text = related, keys, text
        self._explore()["fulltext"] = fulltext

    def _write_fulltext(self, graph: nx.MultiDiGraph, identity: Mapping[str, Any]) -> FullTextIndex:
        nodes = graph.nodes
        return FullTextIndex.build(((n, d) for n, d in nodes.items() if d.get("label") == "Paper"),
                                   self.path / FULLTEXT_DIR, identity)

    def _load_fulltext(self) -> FullTextIndex:
        # The index the build wrote, if it was written for this graph; else (a store built by an older kg, or
        # one whose index was lost) built in memory now.
        gfile = self.path / GRAPH_FILE
        identity = (self._record.identity() if self._record is not None
                    else source_identity(gfile) if gfile.exists() else None)
        if self._fulltext_damage is not None:  # checked once: not every search reads the whole index again
            raise StoreError(self._fulltext_damage)
        try:
            opened = FullTextIndex.open(self.path / FULLTEXT_DIR, identity) if identity is not None else None
        except StoreError as exc:
            self._fulltext_damage = str(exc)
            raise
        return opened if opened is not None else super()._load_fulltext()

    def info(self) -> dict[str, Any]:
        files = [f for f in self.path.rglob("*") if f.is_file()]
        return {"store": "embedded", "path": str(self.path), "bytes": sum(f.stat().st_size for f in files)}
