"""The embedded store's write lock: an flock on ``.lock`` that records its holder, never outlives it in a child,
and is taken over (with one line saying so) when the build that took it is gone."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import time
from pathlib import Path

from kg.errors import StoreLockedError

_HELD: set[int] = set()  # lock descriptors this process holds
TAKEOVER_WAIT_S = 3.0


def _close_in_child() -> None:
    # A forked child (a build's extraction worker, a Cypher worker) shares the lock's open file; if it kept a
    # descriptor, the lock would stay held for as long as the child lives, after its parent is killed.
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(fd: int) -> int | None:
    data = os.pread(fd, 32, 0).strip()
    return int(data) if data.isdigit() else None


def _openers(path: Path) -> list[int]:
    """The processes (other than this one) with ``path`` open (Linux /proc; empty elsewhere)."""
    target, me, found = str(path.resolve()), os.getpid(), []
    with contextlib.suppress(OSError):
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == me:
                continue
            with contextlib.suppress(OSError):
                if any(os.readlink(fd) == target for fd in (proc / "fd").iterdir()):
                    found.append(int(proc.name))
    return found


def _take_over(path: Path, fd: int, holder: int, where: Path) -> bool:
    """The build ``holder`` is gone but the lock is held: by processes that inherited its descriptor (workers
    of a build run by an older kg). Stop them and take the lock; False when nothing could be found to stop."""
    leftovers = _openers(path)
    if not leftovers:
        return False
    for pid in leftovers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + TAKEOVER_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
    print(f"kg: {where}: took over the write lock of build {holder}, which is gone (stopped its "
          f"{len(leftovers)} leftover process(es): {', '.join(map(str, leftovers))})", file=sys.stderr)
    return True


def acquire(store_dir: Path, name: str, wait: bool) -> int:
    """Lock ``store_dir/name`` for writing; returns the descriptor. StoreLockedError when another live build
    holds it (unless ``wait``)."""
    path = store_dir / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        if not (holder is not None and not _alive(holder) and _take_over(path, fd, holder, store_dir)):
            if not wait:
                os.close(fd)
                who = f" (pid {holder})" if holder is not None else ""
                raise StoreLockedError(f"{store_dir}: another kg build{who} is writing this store; wait for it "
                                       f"to finish (or pass --wait)") from None
            fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD.add(fd)
    return fd


def release(fd: int) -> None:
    if fd in _HELD:  # a descriptor inherited over fork was closed in the child; never touch its number
        _HELD.discard(fd)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
