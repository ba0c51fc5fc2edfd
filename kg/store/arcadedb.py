"""Start a local ArcadeDB server with its Bolt plugin (from the arcadedb-embedded package): a real Bolt
server for kg's tests and benchmarks on machines that cannot run Neo4j. Not for production use."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kg.errors import StoreError


@dataclass(frozen=True)
class BoltServer:
    uri: str
    user: str
    password: str
    log: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


@contextmanager
def arcadedb_server(root: Path, *, password: str, databases: tuple[str, ...] = ("kg",), heap: str = "1g",
                    start_timeout_s: float = 120.0) -> Iterator[BoltServer]:
    """ArcadeDB on loopback ports chosen now, data under ``root``, the given databases created; stopped on
    exit. Raises StoreError (with the end of the server's log) when it does not start."""
    import arcadedb_embedded

    pkg = Path(arcadedb_embedded.__file__).parent
    java = pkg / "jre" / "bin" / "java"
    if not java.exists():
        raise StoreError(f"arcadedb-embedded has no bundled Java at {java}")
    bolt_port, http_port = free_port(), free_port()
    log = root / "server.log"
    cmd = [
        str(java), f"-Xmx{heap}",
        f"-Darcadedb.server.rootPath={root}",
        f"-Darcadedb.server.databaseDirectory={root / 'databases'}",
        f"-Darcadedb.server.rootPassword={password}",
        "-Darcadedb.server.defaultDatabases=" + ";".join(f"{db}[root]" for db in databases),
        "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        "-Darcadedb.bolt.host=127.0.0.1", f"-Darcadedb.bolt.port={bolt_port}",
        "-Darcadedb.server.httpIncomingHost=127.0.0.1", f"-Darcadedb.server.httpIncomingPort={http_port}",
        "-cp", f"{pkg / 'jars'}{os.sep}*", "com.arcadedb.server.ArcadeDBServer",
    ]
    root.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=root)
    try:
        deadline = time.monotonic() + start_timeout_s
        while "ArcadeDB Server started" not in log.read_text(errors="replace"):
            if proc.poll() is not None:
                raise StoreError(f"the ArcadeDB Bolt server exited with {proc.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                raise StoreError(f"the ArcadeDB Bolt server did not start in {start_timeout_s:.0f} s:\n{_tail(log)}")
            time.sleep(0.2)
        yield BoltServer(f"bolt://127.0.0.1:{bolt_port}", "root", password, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
