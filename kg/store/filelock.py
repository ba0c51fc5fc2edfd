"""The embedded store's write lock: an flock on ``.lock`` that records its holder and never outlives it in a child
of kg's own. A lock whose build is gone but that something still holds (a process that inherited the descriptor)
is reported with what has the file open; kg never stops another process to take a lock."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
from pathlib import Path

from kg.errors import StoreError, StoreLockedError
from kg.files import kind_of

_HELD: set[int] = set()  # lock descriptors this process holds


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


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        return " ".join(" ".join(a.decode(errors="replace").split()) for a in args if a)[:120]  # one line
    return "?"


def _stale_message(store_dir: Path, path: Path, holder: int) -> str:
    """The build ``holder`` is gone but the lock is held: by a process that inherited its descriptor (a worker
    of a build run by an older kg) or opened the file itself. Say which processes have it open."""
    openers = _openers(path)
    who = "; ".join(f"pid {p}: {_command(p)}" for p in openers) if openers else "no process this user can see"
    return (f"{store_dir}: the build that took the write lock (pid {holder}) is gone, but the lock is still held; "
            f"processes with {path.name} open: {who}. Stop the one left over from that build, then build again "
            f"(or pass --wait)")


def _open_lock(path: Path) -> int:
    """The lock file, opened (made if absent). Anything but a regular file in its place (a directory, a FIFO, a
    link) is a StoreError: O_NOFOLLOW so a link is never followed (nor its target made), O_NONBLOCK so a FIFO
    is not waited on."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        try:
            mode: int | None = os.lstat(path).st_mode
        except OSError:
            mode = None
        if mode is None or stat.S_ISREG(mode):  # no permission, a read-only file system, the folder gone
            raise StoreError(f"{path}: cannot open the store's write lock ({exc.strerror or exc})") from None
        what = kind_of(mode) + (f" (-> {os.readlink(path)})" if stat.S_ISLNK(mode) else "")
        raise StoreError(_odd_lock(path, what)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise StoreError(_odd_lock(path, kind_of(mode)))
    os.set_blocking(fd, True)
    return fd


def _odd_lock(path: Path, what: str) -> str:
    return f"{path} is {what}, not the store's lock file; remove it (kg makes it anew) and build again"


def acquire(store_dir: Path, name: str, wait: bool) -> int:
    """Lock ``store_dir/name`` for writing; returns the descriptor. StoreLockedError when another live build
    holds it (unless ``wait``)."""
    path = store_dir / name
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        if not wait:
            os.close(fd)
            if holder is not None and not _alive(holder):
                raise StoreLockedError(_stale_message(store_dir, path, holder)) from None
            who = f" (pid {holder})" if holder is not None else ""
            raise StoreLockedError(f"{store_dir}: another kg build{who} is writing this store; wait for it "
                                   f"to finish (or pass --wait)") from None
        if holder is not None and not _alive(holder):
            logging.getLogger(__name__).warning("%s; waiting for it to be released",
                                                _stale_message(store_dir, path, holder).split(". Stop")[0])
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
