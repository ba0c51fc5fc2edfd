"""A killed build leaves nothing running and nothing locked: its workers die with it, a lock whose build is gone
but that a leftover still holds is reported with what holds it (never killed), and the next command says what
the interruption left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from kg.errors import StoreLockedError
from kg.procs import children_by_parent
from kg.store.embedded import LOCK_FILE, SAVING_FILE, EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE

from .helpers import KG, ROOT, kg, no_traceback
from .test_crash import _fresh_copy, _killed_build, _run_forked, _start_build, _wait_for


def _children(pid: int) -> list[int]:
    return children_by_parent().get(pid, [])


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


# A build (this script) that dies holding the lock while a forked "worker" keeps the inherited descriptor:
# what a `kg build --jobs 2` killed with SIGKILL left behind before its workers died with it.
_ORPHANING_BUILD = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{os.getpid()}\\n".encode())
    worker = os.fork()
    if worker == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(devnull, std)  # so the test's pipe closes when the "build" exits
        time.sleep(120)
        os._exit(0)
    print(worker, flush=True)
    os._exit(0)
""")


def test_a_lock_whose_build_is_gone_is_reported_with_its_holder_never_killed(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    store_dir.mkdir()
    r = subprocess.run([sys.executable, "-c", _ORPHANING_BUILD, str(store_dir / LOCK_FILE)], capture_output=True,
                       text=True, timeout=60)
    worker = int(r.stdout)
    try:
        holder = int((store_dir / LOCK_FILE).read_text())
        with pytest.raises(StoreLockedError) as err:
            EmbeddedStore(store_dir, writable=True)
        msg = str(err.value)
        assert msg.startswith(f"{store_dir}: the build that took the write lock (pid {holder}) is gone, but the "
                              f"lock is still held; processes with {LOCK_FILE} open: pid {worker}: ")
        assert msg.endswith("Stop the one left over from that build, then build again (or pass --wait)")
        assert _alive(worker)  # kg stops no other process
        r = kg("build", str(ROOT / "seeds"), "--store-dir", str(store_dir), timeout=60)
        assert r.returncode == 1
        no_traceback(r.stderr)
        assert r.stderr.strip().splitlines() == [f"kg: error: {msg}"]
    finally:
        os.kill(worker, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    with EmbeddedStore(store_dir, writable=True):  # once the leftover is gone, the lock is free
        assert int((store_dir / LOCK_FILE).read_text()) == os.getpid()


def test_a_live_build_is_named_and_never_taken_over(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with EmbeddedStore(store_dir, writable=True):
        r = kg("build", str(ROOT / "seeds"), "--store-dir", str(store_dir), timeout=60)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"kg: error: {store_dir}: another kg build (pid {os.getpid()}) is writing this store; wait for it to "
        f"finish (or pass --wait)"]


def test_a_forked_child_does_not_keep_the_lock(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with EmbeddedStore(store_dir, writable=True):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
    try:
        # The parent closed the store; the child still runs but holds no descriptor: the lock is free.
        with EmbeddedStore(store_dir, writable=True):
            pass
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


@pytest.mark.slow
def test_a_killed_build_leaves_no_worker_and_the_next_build_starts_at_once(
        tmp_path: Path, built: dict[str, Path], corpora: dict[str, Path]) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    proc = _start_build(store_dir, corpora["b"], "--jobs", "2")
    try:
        assert _wait_for(lambda: len(_children(proc.pid)) >= 2, proc), "the build should have started workers"
        time.sleep(1.0)
        workers = _children(proc.pid)
    finally:
        proc.kill()
        proc.wait(30)
    t0 = time.monotonic()
    deadline = t0 + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)], "the workers of a killed build must die with it"
    nxt = subprocess.Popen([*KG, "build", str(corpora["b"]), "--store-dir", str(store_dir), "--no-progress"],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = nxt.communicate(timeout=300)
    assert nxt.returncode == 0, err
    assert "another kg build" not in err
    no_traceback(err)


def test_after_a_kill_mid_save_every_command_names_the_interrupted_build(
        tmp_path: Path, built: dict[str, Path], corpora: dict[str, Path], extractor: Any) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    before = (store_dir / SNAPSHOT_FILE).read_bytes()
    # Killed halfway through writing the new snapshot: the previous one is still in place.
    assert _run_forked(_killed_build, "saving", store_dir, corpora["b"], extractor) == -signal.SIGKILL
    assert (store_dir / SNAPSHOT_FILE).read_bytes() == before and (store_dir / SAVING_FILE).exists()
    r = kg("stats", "--store-dir", str(store_dir), timeout=120)
    no_traceback(r.stderr)
    assert r.returncode == 0 and "older kg" not in r.stderr
    assert ("the last `kg build` into this store was stopped while saving; this is the graph of the build before it"
            in r.stderr), r.stderr
    # The next build writes the snapshot, and the message is gone.
    with EmbeddedStore(store_dir, writable=True) as store:
        from kg.build import build

        build([corpora["b"]], store, extractor=lambda: extractor, on_skip=lambda s: None)
    assert not (store_dir / SAVING_FILE).exists()
    r = kg("stats", "--store-dir", str(store_dir), timeout=120)
    assert r.returncode == 0 and "stopped while saving" not in r.stderr


def test_a_binary_file_prints_a_handful_of_warnings_and_a_summary(tmp_path: Path) -> None:
    junk = tmp_path / "binary.jsonl"
    junk.write_bytes(os.urandom(200_000))
    r = kg("build", str(junk), "--store-dir", str(tmp_path / "s"), "--no-progress", timeout=120)
    no_traceback(r.stderr)
    warnings = [x for x in r.stderr.splitlines() if x.startswith("kg: warning:")]
    assert 2 <= len(warnings) <= 21, len(warnings)  # at most 10 of each kind, then one summary
    assert warnings[-1].startswith(f"kg: warning: {junk}: ") and "more skipped records not shown" in warnings[-1]
