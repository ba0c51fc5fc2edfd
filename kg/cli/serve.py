"""`kg serve`: the HTTP API (and HTML views) over a store, read-only, on 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import errno
import gc
import socket
import sys
from typing import TYPE_CHECKING

import click

from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import InputError

if TYPE_CHECKING:
    from kg.store.base import Store

SWITCH_INTERVAL_S = 0.001
GC_THRESHOLDS = (50_000, 20, 10)  # Python's: 700, 10, 10


@click.command()
@store_options
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind; 0.0.0.0 exposes the API to the network.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--cypher-timeout", default=10.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds one Cypher query may run; past it the query is stopped (408).")
@click.option("--cypher-workers", default=None, type=click.IntRange(min=0),
              help="Cypher worker processes, also the most queries run at once (more wait briefly, then 503); "
                   "0 runs Cypher in the server process.  [default: two per core, 4 to 16]")
@click.option("--cypher-memory", default=512, show_default=True, type=click.IntRange(min=64),
              help="Megabytes of memory one Cypher query may add to its worker; past it the query gets 400.")
@click.option("--response-cache", default=64, show_default=True, type=click.IntRange(min=0),
              help="Megabytes of JSON answers to repeated GET requests kept in memory; 0 turns the cache off.")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Serving processes on the one port, forked once the store is loaded so they share its memory; "
                   "each answers on its own core (embedded store only). The Cypher workers are split among them, "
                   "and each process admits its own queries.")
@click.option("--header-timeout", default=10.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds a request's headers may take to arrive (a new connection's: from when it opened); past "
                   "them (plus up to a fifth more, drawn at random) the connection is closed.")
@click.option("--body-timeout", default=30.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds a request's body may take to arrive after its headers; past them (plus up to a fifth "
                   "more, drawn at random) the connection is closed.")
@click.option("--keep-alive", default=5.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds a connection may stay idle after an answer before it is closed.")
@click.option("--max-client-connections", default=256, show_default=True, type=click.IntRange(min=0),
              help="Connections one address may hold (per serving process); past it the one idle longest is "
                   "closed. 0: no cap (behind a proxy, where every client has the proxy's address).")
@click.option("--max-connections", default=0, type=click.IntRange(min=0),
              help="Connections in all (per serving process); past it the one idle longest is closed.  "
                   "[default: what the descriptor limit allows, less a reserve]")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("--token", envvar="KG_API_TOKEN", default=None, show_default=False,
              help="Require 'Authorization: Bearer TOKEN' on every request (views: ?token=); needed when --host "
                   "is not loopback (env KG_API_TOKEN; prefer the variable: options show in `ps`).")
def serve(store_opts: StoreOptions, host: str, port: int, cypher_timeout: float, cypher_workers: int | None,
          cypher_memory: int, response_cache: int, processes: int, header_timeout: float, body_timeout: float,
          keep_alive: float, max_client_connections: int, max_connections: int, log_level: str,
          token: str | None) -> None:
    """Serve the graph over HTTP: JSON API with docs at /docs, read-only Cypher at POST /cypher."""
    import threading

    import uvicorn  # imported here so other commands start fast

    from api.main import create_app
    from api.prefork import serve_forked
    from api.protocol import guarded_protocol, raise_descriptor_limit
    from api.settings import Settings, default_cypher_workers

    if processes > 1 and store_opts.kind != "embedded":
        raise InputError(f"--processes {processes} needs the embedded store: forked processes cannot share one "
                         f"{store_opts.kind} driver's connections")
    workers = max(default_cypher_workers(), processes) if cypher_workers is None else cypher_workers
    if 0 < workers < processes:
        raise InputError(f"--processes {processes} needs at least as many Cypher workers (one a process); give "
                         f"--cypher-workers {processes} or more, or 0 to run Cypher in the serving processes")
    # Refuses (one line, exit 1) a non-loopback host without a token, before the store is opened.
    settings = Settings(store_kind=store_opts.kind, store_dir=store_opts.store_dir, host=host, port=port,
                        cypher_timeout_s=cypher_timeout, token=token or None,
                        # split (a remainder unused), so all processes together run at most `workers` at once
                        cypher_workers=workers if processes == 1 or not workers else max(1, workers // processes),
                        cypher_memory_mb=cypher_memory, response_cache_mb=response_cache,
                        header_timeout_s=header_timeout, body_timeout_s=body_timeout, keep_alive_s=keep_alive,
                        max_client_connections=max_client_connections, max_connections=max_connections)
    # Every connection holds a descriptor: a soft limit of 1,024 is a thousand idle connections, then nothing.
    raise_descriptor_limit()
    # The event loop takes the interpreter back from a thread building a page (or a heavy read) after 1 ms, not
    # Python's default 5: a request handled on the loop waits that long at each of its steps. And the collector
    # runs less often: each full collection holds the interpreter for as long as it walks every object alive (the
    # 200,000 a 5,000-node view is made of, 30-100 ms), and Python's thresholds set one off every few hundred
    # thousand allocations; a served store's reads make little cyclic garbage.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.set_threshold(*GC_THRESHOLDS)
    # One BLAS thread: requests already run side by side on threads, and OpenBLAS's own threads, each request's
    # matrix products split over the cores and waiting for one another, took a third of the server's CPU under 50
    # clients (bench/load.py: 10.4 -> 7.2 ms a request, search p50 1.4 s -> 0.3 s).
    _one_blas_thread()
    # Opened here rather than in the app's lifespan so a missing or broken store is one clear line
    # (`kg: error: ...`, exit 1) instead of a startup traceback; the app still opens it only once.
    with open_store(store_opts) as store:
        app = create_app(settings, store=store)
        # Bound before saying "serving": a port in use is one line, not a promise followed by uvicorn's error.
        sock = listen(host, port)

        # Made once the store is open (its files count against the descriptors) and before any fork.
        protocol = guarded_protocol(settings.connection_limits())

        def run(sock: socket.socket) -> None:
            config = uvicorn.Config(app, log_level=log_level, http=protocol, ws="none",
                                    timeout_keep_alive=settings.keep_alive_s)  # type: ignore[arg-type]  # why: uvicorn types it int; any float works (call_later's delay)
            uvicorn.Server(config).run(sockets=[sock])

        where = (f"on http://{host}:{sock.getsockname()[1]} (docs at /docs{'; token required' if token else ''}"
                 f"{f'; {processes} processes' if processes > 1 else ''}); Ctrl-C to stop")
        with sock:
            if processes == 1:
                # Requests are answered at once; the lazily built indexes are made meanwhile (seconds at 83k).
                threading.Thread(target=_warm, args=(store,), name="kg-warm", daemon=True).start()
                click.echo(f"kg: serving {store_opts.label()} {where}", err=True)
                run(sock)
                return
            # Built before the fork, once, so that every process shares them rather than building its own.
            click.echo(f"kg: building the search and related-paper indexes of {store_opts.label()}", err=True)
            _warm(store)
            click.echo(f"kg: serving {store_opts.label()} {where}", err=True)
            if serve_forked(run, sock, processes, lambda line: click.echo(line, err=True)):
                raise SystemExit(1)


def _one_blas_thread() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, or an InputError naming the address and what to do."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restarts need no wait
        sock.bind(addr)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        hint = "; is another kg serve running? choose another --port" if exc.errno == errno.EADDRINUSE else ""
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from None
    return sock


def _warm(store: Store) -> None:
    from api.routes.meta import prime

    try:
        store.warm()
        prime(store)
    except Exception as exc:  # noqa: BLE001 - the server goes on; the index is built again on first use
        click.echo(f"kg: warning: building the search and related-paper indexes failed: {exc}", err=True)
    # What warming built lives as long as the server: out of the collector's generations, as the graph is, so a
    # full collection, which a request that allocates much (a 5,000-node view) sets off, no longer walks it: at
    # 5,000 papers it held the interpreter, and so the event loop, 85-105 ms; 10-35 ms now.
    gc.collect()
    gc.freeze()
