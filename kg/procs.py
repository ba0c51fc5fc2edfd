"""Child processes that die with their parent: ``PR_SET_PDEATHSIG`` on Linux, a watchdog thread elsewhere."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one, else every core)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a forked child: the kernel kills it when ``parent_pid`` (the thread that forked it)
    exits, however that happens (SIGKILL included), so no worker outlives the process that started it."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent_pid:  # the parent died before prctl took effect
                    os._exit(0)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch, args=(parent_pid,), daemon=True, name="kg-parent-watchdog").start()


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(0)


def children_by_parent() -> dict[int, list[int]]:
    """parent pid -> child pids of every process now running (Linux /proc; empty elsewhere)."""
    from pathlib import Path

    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return children
    for d in proc.iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    return children


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``: its children, theirs, and so on (for tests and benchmarks of workers)."""
    children, out, todo = children_by_parent(), set(), [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.add(c)
            todo.append(c)
    return out
