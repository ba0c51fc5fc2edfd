"""Load test of `kg serve`: concurrent clients mixing the read endpoints and Cypher, with an optional hostile stream.

    python bench/load.py STORE_DIR [--clients 50] [--seconds 60] [--hostile] [--serve-arg=--cypher-workers=2]
    python bench/load.py --url http://127.0.0.1:8000 [...]     # a server already running (loopback only)

Starts `kg serve` on 127.0.0.1 (or uses --url, which must be loopback), then runs ``--clients`` keep-alive
clients for ``--seconds``: each request is /papers/{id}/related, /entities/{name}, /search?q= or a two-hop
Cypher query, in the proportions of ``MIX`` (or ``--mix``), for papers and names drawn from the whole store
(or ``--population N`` of each). One more client polls /health every 50 ms. With ``--hostile``, a
further client sends ReDoS and memory-bomb Cypher queries back to back (expected answers: 408 or 400; anything
else is an error). Prints per-endpoint count, p50/p95/p99 in ms and errors, and the server's peak RSS (server
and its child processes) over its idle RSS. Bounded: fixed duration, one request in flight per client,
never a host other than loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import defaultdict
from pathlib import Path

from kg.procs import descendants

MIX = (("related", 30), ("entity", 30), ("search", 25), ("cypher", 15))
TWO_HOP = ("MATCH (p:Paper {id: $id})-[]->(e)<-[]-(q:Paper) WHERE q <> p "
           "RETURN q.id AS id, count(e) AS shared ORDER BY shared DESC LIMIT 10")
HOSTILE = (  # (name, body, statuses that count as a correct answer: an answer in time, never a hang or a 5xx)
    ("redos", {"query": "MATCH (p:Paper) WHERE p.abstract =~ '(.*a){12}x' RETURN count(p)"}, {200, 400, 408}),
    ("redos2", {"query": "RETURN 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' =~ '(a+)+$'"}, {200, 400, 408}),
    ("membomb", {"query": "UNWIND range(1, 10000000) AS x RETURN x ORDER BY x DESC LIMIT 1"}, {200, 400, 408}),
    ("strbomb", {"query": "WITH reduce(s = 'x', i IN range(1, 22) | s + s) AS s "
                          "RETURN size([x IN range(1, 600) | toUpper(s)])"}, {400, 408}),
)


class Http:
    """One keep-alive HTTP/1.1 connection: small and predictable, so the client costs little CPU itself."""

    def __init__(self, host: str, port: int, token: str | None) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        for attempt in (0, 1):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            data = json.dumps(body).encode() if body is not None else b""
            head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", f"Content-Length: {len(data)}"]
            if body is not None:
                head.append("Content-Type: application/json")
            if self.token:
                head.append(f"Authorization: Bearer {self.token}")
            try:
                self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
                await self.writer.drain()
                assert self.reader is not None
                status_line = await self.reader.readline()
                if not status_line:
                    raise ConnectionError("server closed the connection")
                status = int(status_line.split()[1])
                length, close = 0, False
                while (line := await self.reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                    elif name.lower() == "connection" and value.strip().lower() == "close":
                        close = True
                payload = await self.reader.readexactly(length)
                if close:
                    await self.close()
                return status, payload
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def cpu_s(pid: int, children: bool = True) -> float:
    """CPU seconds (user + system) used so far by ``pid`` and (``children``) its live descendants (Linux /proc)."""
    total = 0
    for p in (pid, *(descendants(pid) if children else ())):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, in KiB (Linux /proc)."""
    total = 0
    for p in (pid, *descendants(pid)):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


async def run(args: argparse.Namespace, host: str, port: int, server_pid: int | None) -> None:
    setup = Http(host, port, args.token)

    async def fetch(path: str) -> list[dict]:
        """The first --population items of a listing (every one when it is 0), a page of 200 at a time."""
        items: list[dict] = []
        while not args.population or len(items) < args.population:
            page = json.loads((await setup.request("GET", f"{path}?limit=200&offset={len(items)}"))[1])["items"]
            items += page
            if len(page) < 200:
                break
        return items[: args.population or None]

    papers, entities = await fetch("/papers"), await fetch("/entities")
    await setup.close()
    paper_ids = [p["id"] for p in papers]
    names = [e["name"] for e in entities]
    words = sorted({w for n in names for w in n.split() if len(w) > 3}) or names
    lat: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    stop = time.monotonic() + args.seconds
    rng = random.Random(args.seed)
    kinds = [k for k, w in args.mix for _ in range(w)]
    q = urllib.parse.quote

    async def timed(http: Http, name: str, method: str, path: str, body: dict | None = None,
                    ok: set[int] = frozenset({200})) -> None:
        t = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(http.request(method, path, body), args.request_timeout)
        except (TimeoutError, OSError, ConnectionError, ValueError, IndexError):
            status = 0
            await http.close()
        lat[name].append((time.perf_counter() - t) * 1000)
        statuses[name][status] += 1
        if status not in ok:
            errors[name] += 1

    async def client() -> None:
        http = Http(host, port, args.token)
        while time.monotonic() < stop:
            kind = rng.choice(kinds)
            if kind == "related":
                await timed(http, kind, "GET", f"/papers/{q(rng.choice(paper_ids), safe='')}/related")
            elif kind == "entity":
                await timed(http, kind, "GET", f"/entities/{q(rng.choice(names), safe='')}?paper_limit=20")
            elif kind == "search":
                await timed(http, kind, "GET", f"/search?q={q(rng.choice(words))}")
            else:
                await timed(http, "two-hop cypher", "POST", "/cypher",
                            {"query": TWO_HOP, "parameters": {"id": rng.choice(paper_ids)}})
        await http.close()

    async def health() -> None:
        http = Http(host, port, args.token)
        while time.monotonic() < stop:
            await timed(http, "health", "GET", "/health")
            await asyncio.sleep(0.05)
        await http.close()

    async def hostile() -> None:
        http = Http(host, port, args.token)
        i = 0
        while time.monotonic() < stop:
            name, body, ok = HOSTILE[i % len(HOSTILE)]
            i += 1
            await timed(http, f"hostile {name}", "POST", "/cypher", body, ok)
        await http.close()

    peak = [0]
    idle = rss_kb(server_pid) if server_pid else 0

    async def sample() -> None:
        while time.monotonic() < stop:
            peak[0] = max(peak[0], rss_kb(server_pid))  # type: ignore[arg-type]
            await asyncio.sleep(0.5)

    tasks = [client() for _ in range(args.clients)] + [health()]
    if args.hostile:
        tasks.append(hostile())
    if server_pid:
        tasks.append(sample())
    t0, client0 = time.monotonic(), own_cpu_s()
    server0, main0 = (cpu_s(server_pid), cpu_s(server_pid, False)) if server_pid else (0.0, 0.0)
    await asyncio.gather(*tasks)
    wall = time.monotonic() - t0
    client_cpu = own_cpu_s() - client0
    server_cpu, main_cpu = ((cpu_s(server_pid) - server0, cpu_s(server_pid, False) - main0) if server_pid
                            else (0.0, 0.0))
    print(f"{args.clients} clients + /health poller{' + hostile stream' if args.hostile else ''}, {wall:.0f} s, "
          f"loadavg before {args.load_before}")
    print("| endpoint | requests | p50 ms | p95 ms | p99 ms | errors | statuses |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in sorted(lat):
        xs = lat[name]
        st = ", ".join(f"{s}x{n}" for s, n in sorted(statuses[name].items()))
        print(f"| {name} | {len(xs)} | {pct(xs, 50):.0f} | {pct(xs, 95):.0f} | {pct(xs, 99):.0f} | "
              f"{errors[name]} | {st} |")
    n = sum(len(xs) for xs in lat.values())
    # CPU per request is what bounds the throughput of closed-loop clients on a small machine (Little's law:
    # latency ~ clients x CPU per request / cores), whatever else runs on it.
    print(f"{n} requests, {n / wall:.0f}/s; CPU per request: load generator {client_cpu / n * 1000:.2f} ms"
          + (f", server with its workers {server_cpu / n * 1000:.2f} ms (its own process, which runs on one core: "
             f"{main_cpu / n * 1000:.2f} ms)" if server_pid else "")
          + f"; loadavg after {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    if server_pid:
        print(f"server RSS (with child processes): idle {idle / 1024:.0f} MiB, peak {peak[0] / 1024:.0f} MiB, "
              f"peak over idle {(peak[0] - idle) / 1024:.0f} MiB")


def parse_mix(text: str) -> tuple[tuple[str, int], ...]:
    kinds = {k for k, _ in MIX}
    try:
        mix = tuple((k, int(w)) for k, _, w in (part.partition("=") for part in text.split(",")))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a mix of weights: {text!r}") from None
    if not mix or any(k not in kinds or w < 0 for k, w in mix) or not sum(w for _, w in mix):
        raise argparse.ArgumentTypeError(f"kinds are {', '.join(sorted(kinds))}, weights whole numbers >= 0")
    return mix


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", nargs="?", help="a store directory built by `kg build` (starts `kg serve` on it)")
    ap.add_argument("--url", help="a running server instead, e.g. http://127.0.0.1:8000 (loopback only)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--hostile", action="store_true", help="add a client sending ReDoS and memory-bomb queries")
    ap.add_argument("--request-timeout", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--population", type=int, default=0,
                    help="papers and entities the requests are drawn from (0, the default: every one in the store); "
                         "a small population repeats requests, which the response cache then answers")
    ap.add_argument("--mix", type=parse_mix, default=MIX,
                    help="the request mix as weights, e.g. related=30,entity=30,search=40 (default: "
                         + ",".join(f"{k}={w}" for k, w in MIX) + "); cypher=0 leaves Cypher out, so no client "
                         "waits in its queue and all of them load the light endpoints")
    ap.add_argument("--serve-arg", action="append", default=[], help="extra argument for `kg serve` (repeatable)")
    args = ap.parse_args()
    args.token = os.environ.get("KG_API_TOKEN")
    args.load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if not 0 <= args.clients <= 500 or not 0 < args.seconds <= 600:
        sys.exit("--clients must be 0..500 and --seconds 0..600")
    proc = None
    if args.url:
        u = urllib.parse.urlsplit(args.url)
        if u.hostname not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("load tests run against loopback only (127.0.0.1)")
        host, port = "127.0.0.1" if u.hostname == "localhost" else u.hostname, u.port or 80
    elif args.store:
        host, port = "127.0.0.1", free_port()
        proc = subprocess.Popen([sys.executable, "-m", "kg", "serve", "--store-dir", args.store, "--host", host,
                                 "--port", str(port), "--log-level", "warning", *args.serve_arg])
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(f"http://{host}:{port}/health", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit("kg serve did not start")
                time.sleep(0.2)
        # Warm the lazily built indexes, so the figures are of a running server, not of its first calls.
        urllib.request.urlopen(f"http://{host}:{port}/search?q=graph", timeout=300).read()
        time.sleep(1.0)
    else:
        sys.exit("give a STORE_DIR or --url")
    try:
        asyncio.run(run(args, host, port, proc.pid if proc else None))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
