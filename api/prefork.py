"""Several serving processes on one listening socket, forked after the store is loaded: each answers requests on
its own core, and all share the store's memory (copy-on-write) instead of loading it again.

One Python process answers on one core at a time, whatever its threads; on a loaded 2-core machine that core,
not the store, bounded how many requests a second the server answered. The parent forks ``processes`` children,
each running its own event loop (and its own Cypher workers) on the shared socket, replaces one that dies, and
stops them all on SIGTERM or SIGINT. Children die with the parent (``PR_SET_PDEATHSIG``), so killing the parent in
any way leaves no process behind.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
import time
from collections.abc import Callable

from kg.procs import die_with_parent

FAST_EXIT_S = 5.0  # a child that exits this soon after starting, this many times running, is failing to start
FAST_EXITS = 5


def serve_forked(serve: Callable[[socket.socket], None], sock: socket.socket, processes: int,
                 say: Callable[[str], None]) -> int:
    """Run ``serve(sock)`` in ``processes`` forked children until a signal stops them; the exit status."""
    parent = os.getpid()
    children: dict[int, float] = {}  # pid -> when it started
    stopping = False
    fast_exits = 0

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:  # the child: serve until told to stop, then leave without running the parent's clean-up
            status = 1
            try:
                die_with_parent(parent)
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)  # uvicorn installs its own handlers as it starts
                serve(sock)
                status = 0
            except BaseException as exc:  # noqa: BLE001 - a child must never return into the parent's code
                say(f"kg: serving process {os.getpid()} failed: {exc}")
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children[pid] = time.monotonic()

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    # What was loaded so far is never collected: the collector would otherwise write to every object's header
    # in each child and so copy the pages the children share.
    gc.collect()
    gc.freeze()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for _ in range(processes):
            spawn()
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            started = children.pop(pid, None)
            if started is None or stopping:
                continue
            fast_exits = fast_exits + 1 if time.monotonic() - started < FAST_EXIT_S else 0
            if fast_exits >= FAST_EXITS:
                say(f"kg: error: serving processes keep exiting at start ({_how(status)}); stopping")
                stop(signal.SIGTERM, None)
                return 1
            say(f"kg: serving process {pid} {_how(status)}; starting another")
            spawn()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        gc.unfreeze()


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"
