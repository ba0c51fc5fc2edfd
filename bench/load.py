"""Load test of `kg serve`: concurrent clients mixing the read endpoints and Cypher, with optional hostile streams.

    python bench/load.py STORE_DIR [--clients 50] [--seconds 60] [--hostile] [--serve-arg=--cypher-workers=2]
    python bench/load.py STORE_DIR --idle 20000 --big-cypher 1 --big-view 1   # one round with all of them
    python bench/load.py STORE_DIR --table --seconds 30     # the rounds of issue 33's table, one after another
    python bench/load.py --url http://127.0.0.1:8000 [...]     # a server already running (loopback only)

Starts `kg serve` on 127.0.0.1 (or uses --url, which must be loopback), then runs ``--clients`` keep-alive
clients for ``--seconds``: each request is /papers/{id}/related, /entities/{name}, /search?q= or a two-hop
Cypher query (the small Cypher), in the proportions of ``MIX`` (or ``--mix``), for papers and names drawn from the
whole store (or ``--population N`` of each). One more client polls /health every 50 ms. With ``--hostile``, a
further client sends ReDoS and memory-bomb Cypher queries back to back (expected answers: 408 or 400; anything
else is an error). ``--big-cypher K`` adds K clients looping the largest Cypher answer the limits allow (10,000
rows of a paper, an edge and an entity, 60 MB on a large store), ``--big-view K`` K clients looping the largest
views (``/view?top=5000``, and a 2-hop entity view of 5,000 nodes), and ``--idle N`` a separate process holding N
connections that send no token and never finish a request (a third send nothing, a third part of their headers,
a third part of a body), from 127.0.0.2 and up (200 an address), each opened again a second after the server
closes it. ``--table`` runs five rounds of ``--seconds`` each on the one server (50 mixed clients; 20,000 idle
connections; one big-Cypher client; one big-view client; 50 mixed clients with two big-Cypher clients) and ends
with a table of each round's /health p99 and small-Cypher p95. Measuring starts after ``--warmup`` seconds (10)
of 10 mixed clients, not reported: a server's first seconds fill its caches and finish its background indexing
(the first round measured them: 5 GB of memory, 10 s answers). Prints per-endpoint count, p50/p95/p99 in ms and
errors, and the server's peak RSS (server and its child processes) over its idle RSS. Bounded: fixed duration,
one request in flight per client, never a host other than loopback.
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
# The largest answer the limits allow: 10,000 rows (the most a request may ask for) of whole nodes and edges.
BIG_CYPHER = {"query": "MATCH (p:Paper)-[r]->(e) RETURN p, r, e", "max_rows": 10_000}
BIG_VIEW_NODES = 5000  # the most /view?top= and a view's limit= take
# --table: (name, clients, idle connections, big-Cypher clients, big-view clients)
TABLE = (("50 mixed clients", 50, 0, 0, 0), ("20,000 idle connections", 0, 20_000, 0, 0),
         ("1 client looping the largest Cypher answer", 0, 0, 1, 0),
         ("1 client looping the largest views", 0, 0, 0, 1),
         ("50 mixed clients + 2 looping the largest Cypher answer", 50, 0, 2, 0))
SMALL_CYPHER = "two-hop cypher"


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


class Round:
    """What one round measured: latencies (ms), errors and statuses per endpoint, and what the idle holder saw."""

    def __init__(self) -> None:
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.idle: dict[str, int] = {}
        self.sizes: dict[str, list[int]] = defaultdict(list)  # bytes of the big answers
        self.wall = 0.0


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
    store = {"paper_ids": [p["id"] for p in papers], "names": [e["name"] for e in entities]}
    store["words"] = sorted({w for n in store["names"] for w in n.split() if len(w) > 3}) or store["names"]
    if args.warmup:  # the first seconds of a server fill its caches and finish its background indexing
        await one_round(args, host, port, None, store, clients=10, idle=0, big_cypher=0, big_view=0,
                        hostile=False, seconds=args.warmup, quiet=True)
    if not args.table:
        await one_round(args, host, port, server_pid, store, clients=args.clients, idle=args.idle,
                        big_cypher=args.big_cypher, big_view=args.big_view, hostile=args.hostile)
        return
    summary = []
    for name, clients, idle, big_cypher, big_view in TABLE:
        print(f"\n### {name}")
        r = await one_round(args, host, port, server_pid, store, clients=clients, idle=idle, big_cypher=big_cypher,
                            big_view=big_view, hostile=False)
        summary.append((name, r))
    print(f"\n{args.seconds:g} s a round; ms")
    print("| round | /health p50 / p99 / max | failed | /health, new connection: p99 | failed | small Cypher "
          "p95 | small Cypher 503 | big answers (p50 ms) | other errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for name, r in summary:
        h, fresh = r.lat["health"], r.lat["health (new connection)"]
        small = r.lat.get(SMALL_CYPHER, [])
        n503 = r.statuses[SMALL_CYPHER].get(503, 0) if small else 0
        big = ", ".join(f"{k} {len(v)} ({pct(v, 50):.0f})" for k, v in sorted(r.lat.items()) if k.startswith("big"))
        others = sum(e for k, e in r.errors.items() if not k.startswith("health"))
        print(f"| {name} | {pct(h, 50):.0f} / {pct(h, 99):.0f} / {max(h, default=float('nan')):.0f} | "
              f"{r.errors['health']} of {len(h)} | {pct(fresh, 99):.0f} | "
              f"{r.errors['health (new connection)']} of {len(fresh)} | {f'{pct(small, 95):.0f}' if small else ''} | "
              f"{f'{n503} of {len(small)}' if small else ''} | {big} | {others} |")


async def hold_idle_connections(host: str, port: int, n: int, seconds: float) -> None:
    """``--hold-idle``: keep ``n`` connections open that never finish a request, from 127.0.0.2 and up (200 an
    address), each opened again a second after the server closes it; print ``ready`` once all were tried, then,
    after ``seconds``, a JSON line of what was held and closed."""
    loop = asyncio.get_running_loop()
    parts = (b"", b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ",
             b"POST /cypher HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
             b'{"query": "')
    state = {"open": 0, "closed_by_server": 0, "failed": 0, "opened": 0}
    stopping = False
    transports: list[asyncio.BaseTransport] = []

    class Idle(asyncio.Protocol):
        def __init__(self, slot: int) -> None:
            self.slot = slot

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            state["open"] += 1
            state["opened"] += 1
            transports.append(transport)
            if parts[self.slot % 3]:
                transport.write(parts[self.slot % 3])  # type: ignore[attr-defined]

        def connection_lost(self, exc: Exception | None) -> None:
            state["open"] -= 1
            if not stopping:
                state["closed_by_server"] += 1
                loop.call_later(1.0, lambda: loop.create_task(open_one(self.slot)))

    async def open_one(slot: int) -> None:
        if stopping:
            return
        try:
            await loop.create_connection(lambda: Idle(slot), host, port,
                                         local_addr=(f"127.0.{slot // 50_800}.{2 + slot // 200 % 254}", 0))
        except OSError:
            state["failed"] += 1
            loop.call_later(1.0, lambda: loop.create_task(open_one(slot)))

    for start in range(0, n, 500):  # 5,000 a second at most
        await asyncio.gather(*(open_one(i) for i in range(start, min(n, start + 500))))
        await asyncio.sleep(0.1)
    print(f"ready {state['open']}", flush=True)
    low, high = state["open"], state["open"]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        low, high = min(low, state["open"]), max(high, state["open"])
    stopping = True
    print(json.dumps({**state, "held_min": low, "held_max": high}), flush=True)
    for t in transports:
        t.close()


async def one_round(args: argparse.Namespace, host: str, port: int, server_pid: int | None, store: dict,
                    *, clients: int, idle: int, big_cypher: int, big_view: int, hostile: bool,
                    seconds: float | None = None, quiet: bool = False) -> Round:
    paper_ids, names, words = store["paper_ids"], store["names"], store["words"]
    r = Round()
    lat, errors, statuses = r.lat, r.errors, r.statuses
    rng = random.Random(args.seed)
    kinds = [k for k, w in args.mix for _ in range(w)]
    q = urllib.parse.quote
    holder = None
    if idle:
        holder = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--hold-idle", str(idle), "--url", f"http://{host}:{port}",
            "--seconds", str(args.seconds), stdout=subprocess.PIPE)
        assert holder.stdout is not None
        ready = (await holder.stdout.readline()).decode().split()
        print(f"idle connections: {ready[1] if len(ready) > 1 else '?'} of {idle} open at the start")
    stop = time.monotonic() + (seconds or args.seconds)

    async def timed(http: Http, name: str, method: str, path: str, body: dict | None = None,
                    ok: set[int] = frozenset({200})) -> None:
        t = time.perf_counter()
        try:
            status, payload = await asyncio.wait_for(http.request(method, path, body), args.request_timeout)
            if name.startswith("big"):
                r.sizes[name].append(len(payload))
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
                await timed(http, SMALL_CYPHER, "POST", "/cypher",
                            {"query": TWO_HOP, "parameters": {"id": rng.choice(paper_ids)}})
        await http.close()

    async def health() -> None:
        http = Http(host, port, args.token)
        while time.monotonic() < stop:
            await timed(http, "health", "GET", "/health")
            await asyncio.sleep(0.05)
        await http.close()

    async def fresh_health() -> None:
        """/health on a new connection each time, as a client arriving now would: what idle connections that
        hold every descriptor refuse, where the poller's kept-alive connection would still be answered."""
        while time.monotonic() < stop:
            http = Http(host, port, args.token)
            await timed(http, "health (new connection)", "GET", "/health")
            await http.close()
            await asyncio.sleep(0.1)

    async def hostile_client() -> None:
        http = Http(host, port, args.token)
        i = 0
        while time.monotonic() < stop:
            name, body, ok = HOSTILE[i % len(HOSTILE)]
            i += 1
            await timed(http, f"hostile {name}", "POST", "/cypher", body, ok)
        await http.close()

    async def big_cypher_client() -> None:
        http = Http(host, port, args.token)
        while time.monotonic() < stop:
            await timed(http, "big cypher", "POST", "/cypher", BIG_CYPHER)
        await http.close()

    async def big_view_client() -> None:
        http = Http(host, port, args.token)
        top = q(names[0], safe="") if names else ""
        while time.monotonic() < stop:
            await timed(http, "big view (overview)", "GET", f"/view?top={BIG_VIEW_NODES}")
            if top:
                await timed(http, "big view (entity, 2 hops)", "GET",
                            f"/view/entity/{top}?hops=2&limit={BIG_VIEW_NODES}")
        await http.close()

    peak = [0]
    idle_rss = rss_kb(server_pid) if server_pid else 0

    async def sample() -> None:
        while time.monotonic() < stop:
            peak[0] = max(peak[0], rss_kb(server_pid))  # type: ignore[arg-type]
            await asyncio.sleep(0.5)

    tasks = ([client() for _ in range(clients)] + [health(), fresh_health()]
             + [big_cypher_client() for _ in range(big_cypher)]
             + [big_view_client() for _ in range(big_view)])
    if hostile:
        tasks.append(hostile_client())
    if server_pid:
        tasks.append(sample())
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    t0, client0 = time.monotonic(), own_cpu_s()
    server0, main0 = (cpu_s(server_pid), cpu_s(server_pid, False)) if server_pid else (0.0, 0.0)
    await asyncio.gather(*tasks)
    wall = r.wall = time.monotonic() - t0
    client_cpu = own_cpu_s() - client0
    server_cpu, main_cpu = ((cpu_s(server_pid) - server0, cpu_s(server_pid, False) - main0) if server_pid
                            else (0.0, 0.0))
    if holder is not None:
        assert holder.stdout is not None
        line = await holder.stdout.readline()
        await holder.wait()
        r.idle = json.loads(line) if line.strip() else {}
    if quiet:
        return r
    extras = [f"{clients} clients", "/health pollers"]
    extras += [f"{big_cypher} big-Cypher clients"] if big_cypher else []
    extras += [f"{big_view} big-view clients"] if big_view else []
    extras += ["hostile stream"] if hostile else []
    extras += [f"{idle:,} idle connections"] if idle else []
    print(f"{' + '.join(extras)}, {wall:.0f} s, loadavg before {load_before}")
    print("| endpoint | requests | p50 ms | p95 ms | p99 ms | errors | statuses |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in sorted(lat):
        xs = lat[name]
        st = ", ".join(f"{s}x{n}" for s, n in sorted(statuses[name].items()))
        print(f"| {name} | {len(xs)} | {pct(xs, 50):.0f} | {pct(xs, 95):.0f} | {pct(xs, 99):.0f} | "
              f"{errors[name]} | {st} |")
    for name, sizes in sorted(r.sizes.items()):
        print(f"{name}: {max(sizes) / 1e6:.1f} MB an answer")
    if r.idle:
        print(f"idle connections held: {r.idle.get('held_min', 0):,} to {r.idle.get('held_max', 0):,}; the server "
              f"closed {r.idle.get('closed_by_server', 0):,}, {r.idle.get('failed', 0):,} could not be opened")
    n = sum(len(xs) for xs in lat.values())
    # CPU per request is what bounds the throughput of closed-loop clients on a small machine (Little's law:
    # latency ~ clients x CPU per request / cores), whatever else runs on it.
    print(f"{n} requests, {n / wall:.0f}/s; CPU per request: load generator {client_cpu / n * 1000:.2f} ms"
          + (f", server with its workers {server_cpu / n * 1000:.2f} ms (its own process, which runs on one core: "
             f"{main_cpu / n * 1000:.2f} ms)" if server_pid else "")
          + f"; loadavg after {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    if server_pid:
        print(f"server RSS (with child processes): idle {idle_rss / 1024:.0f} MiB, peak {peak[0] / 1024:.0f} MiB, "
              f"peak over idle {(peak[0] - idle_rss) / 1024:.0f} MiB")
    return r


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
    ap.add_argument("--big-cypher", type=int, default=0, metavar="K",
                    help="add K clients looping the largest Cypher answer the limits allow")
    ap.add_argument("--big-view", type=int, default=0, metavar="K",
                    help="add K clients looping the largest views (5,000 nodes)")
    ap.add_argument("--idle", type=int, default=0, metavar="N",
                    help="hold N connections that send no token and never finish a request (another process)")
    ap.add_argument("--table", action="store_true",
                    help="run five rounds (mixed; idle; big Cypher; big views; mixed with big Cypher) and "
                         "summarise them")
    ap.add_argument("--warmup", type=float, default=10.0,
                    help="seconds of 10 mixed clients before measuring, not reported (0: none)")
    ap.add_argument("--hold-idle", type=int, default=0, help=argparse.SUPPRESS)  # the --idle process
    ap.add_argument("--serve-arg", action="append", default=[], help="extra argument for `kg serve` (repeatable)")
    args = ap.parse_args()
    args.token = os.environ.get("KG_API_TOKEN")
    if not 0 <= args.clients <= 500 or not 0 < args.seconds <= 600 or not 0 <= args.idle <= 100_000 or not (
            0 <= args.big_cypher <= 16 and 0 <= args.big_view <= 16):
        sys.exit("--clients must be 0..500, --seconds 0..600, --idle 0..100000, --big-cypher and --big-view 0..16")
    if args.hold_idle:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # a descriptor a connection
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        u = urllib.parse.urlsplit(args.url or "")
        if u.hostname != "127.0.0.1" or not u.port:
            sys.exit("--hold-idle needs --url http://127.0.0.1:PORT")
        asyncio.run(hold_idle_connections(u.hostname, u.port, args.hold_idle, args.seconds))
        return
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
        auth = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        while True:
            try:
                urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/health", headers=auth),
                                       timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit("kg serve did not start")
                time.sleep(0.2)
        # Warm the lazily built indexes, so the figures are of a running server, not of its first calls.
        urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/search?q=graph", headers=auth),
                               timeout=300).read()
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
