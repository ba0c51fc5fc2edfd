"""Helpers for the reliability suite: the real CLI in a subprocess, store fingerprints, checks of a store."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kg.store.embedded import EmbeddedStore, write_graph

ROOT = Path(__file__).resolve().parents[2]
KG = [sys.executable, "-m", "kg"]


def kg(*args: str, timeout: float = 120, env: dict[str, str] | None = None,
       input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line, as a user would."""
    return subprocess.run([*KG, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})}, input=input)


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and 'File "' not in stderr, stderr[-3000:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


@dataclass(frozen=True)
class Fingerprint:
    """What a store holds, to compare before and after: counts and a hash of the graph in its on-disk form."""

    nodes: int
    edges: int
    graph_hash: str


def fingerprint(store: EmbeddedStore) -> Fingerprint:
    """The in-memory graph (what queries run on), serialised exactly as a save would write it."""
    buf = io.BytesIO()
    write_graph(store.graph, dict(store._papers), buf)
    return Fingerprint(store.graph.number_of_nodes(), store.graph.number_of_edges(),
                       hashlib.sha256(buf.getvalue()).hexdigest())


def check_store_valid(path: Path) -> dict[str, Any]:
    """Re-open the store from disk, read its stats, and run a Cypher count that must agree with them."""
    with EmbeddedStore(path) as store:
        stats = store.stats()
        rows = store.cypher("MATCH (p:Paper) RETURN count(p) AS papers").rows
        assert rows == [[stats.papers]]
        n = store.cypher("MATCH (n) RETURN count(n) AS n").rows[0][0]
        assert n == store.graph.number_of_nodes()
        return {"papers": stats.papers, "entities": stats.entities, "edges": stats.edges}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def start_server(store_dir: Path, *args: str, token: str | None = None,
                 timeout: float = 60) -> tuple[subprocess.Popen[bytes], str]:
    """`kg serve` in a subprocess on a free local port; returns once /health answers (with ``token`` if given)."""
    import time

    import httpx

    port = free_port()
    env = {**os.environ, **({"KG_API_TOKEN": token} if token else {})}
    proc = subprocess.Popen([*KG, "serve", "--store-dir", str(store_dir), "--port", str(port),
                             "--log-level", "warning", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/health", headers=headers, timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise AssertionError(f"kg serve exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"kg serve did not answer within {timeout:g} s")
        time.sleep(0.2)


def stop_server(proc: subprocess.Popen[bytes]) -> str:
    """Stop it as Ctrl-C would; returns what it wrote on stderr."""
    import signal

    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err.decode(errors="replace")


def graph_dump(store_dir: Path) -> bytes:
    """The stored graph and its papers in a canonical form (sorted JSON Lines): the same for the same graph, whatever
    bytes the snapshot's ``marshal`` chose (it shares a repeated string only when that string has other references)."""
    from kg.graph import with_dates

    with EmbeddedStore(store_dir) as store:
        buf = io.BytesIO()
        write_graph(with_dates(store.graph, as_text=True), store._papers, buf)
    return buf.getvalue()
