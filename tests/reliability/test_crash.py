"""Crash safety: a build killed (SIGKILL) or interrupted (SIGINT) at any point leaves a store that opens and holds
either the old graph or the new one, byte for byte, never a mix; a re-run then gives what an uninterrupted build
gives. Concurrent builds into one store: the second refuses at once, or waits with --wait.

Deterministic kill points use forked children of this process (the spaCy pipeline already loaded) in which the
test wraps a library function to kill its own process at that point; nothing in kg knows about it. Timing-based
kills and SIGINT use the real command line.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest

import kg.build as build_module
import kg.store.embedded as embedded_module
from kg.build import build
from kg.cache import ExtractionCache
from kg.store.embedded import INPUTS_FILE, LOCK_FILE, EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE

from .helpers import KG, ROOT, check_store_valid, graph_dump, kg, no_traceback


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _KillingExtractor:
    """Extracts as usual, then kills the process midway through its ``at``-th batch."""

    def __init__(self, inner: Any, at: int) -> None:
        self.inner, self.at, self.calls = inner, at, 0

    def extract_many(self, texts: Any, titles: Any = None) -> Iterator[Any]:
        self.calls += 1
        for i, x in enumerate(self.inner.extract_many(texts, titles)):
            if self.calls == self.at and i == 1:
                _die()
            yield x


def _arm(point: str, extractor: Any) -> Any:
    """Wrap the library function for ``point`` so this process dies there; returns the extractor to use."""
    build_module.BATCH = 4  # several batches, so "between batches" exists for a 20-paper corpus
    if point == "extracting":
        return _KillingExtractor(extractor, at=3)
    if point in ("log-torn", "log-grown"):
        real_append = ExtractionCache.append
        calls = [0]

        def append(self: ExtractionCache, items: Any) -> None:
            calls[0] += 1
            if calls[0] < 2:
                real_append(self, items)
                return
            if point == "log-grown":
                real_append(self, items)
                _die()
            # Write half of the batch's first line, as a kill in the middle of write() would leave it.
            items = list(items)
            h, p = items[0]
            line = orjson.dumps({"h": h, "v": self.version, "r": asdict(p.record), "x": p.extraction.to_store()})
            with open(self.path, "ab") as fh:
                fh.write(line[: len(line) // 2])
                fh.flush()
                os.fsync(fh.fileno())
            _die()

        ExtractionCache.append = append  # type: ignore[method-assign]
    elif point == "saving":
        real_write = embedded_module.write_snapshot

        def write_snapshot(*args: Any, **kwargs: Any) -> Any:
            import io

            buf = io.BytesIO()
            real_write(*args[:-1], buf, **kwargs)
            fh = args[-1]
            fh.write(buf.getvalue()[: buf.tell() // 2])
            fh.flush()
            os.fsync(fh.fileno())
            _die()

        embedded_module.write_snapshot = write_snapshot  # type: ignore[assignment]
    elif point == "renamed":
        real_replace = os.replace

        def replace(src: Any, dst: Any) -> None:
            real_replace(src, dst)
            if Path(dst).name == SNAPSHOT_FILE:
                _die()

        os.replace = replace  # type: ignore[assignment]
    return extractor


def _killed_build(point: str, store_dir: Path, corpus: Path, extractor: Any) -> None:
    ex = _arm(point, extractor)
    with EmbeddedStore(store_dir, writable=True) as store:
        build([corpus], store, extractor=lambda: ex, on_skip=lambda s: None)
    os._exit(0)  # not reached when the kill point is: the test fails on exit code 0


def _run_forked(target: Callable[..., None], *args: Any) -> int:
    proc = multiprocessing.get_context("fork").Process(target=target, args=args)
    proc.start()
    proc.join(120)
    assert proc.exitcode is not None, "the forked build did not finish"
    return proc.exitcode


def _fresh_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    (dst / LOCK_FILE).unlink(missing_ok=True)
    return dst


def _state(store_dir: Path, graph_bytes: dict[str, bytes]) -> str:
    """Which known graph the store holds: 'a' (old) or 'ab' (new); anything else fails the test."""
    data = graph_dump(store_dir)
    held = [k for k, v in graph_bytes.items() if v == data]
    assert held, f"{store_dir} holds neither the old graph nor the new one ({len(data)} bytes)"
    check_store_valid(store_dir)
    return held[0]


def _rerun(store_dir: Path, corpus: Path, extractor: Any) -> None:
    with EmbeddedStore(store_dir, writable=True) as store:
        build([corpus], store, extractor=lambda: extractor, on_skip=lambda s: None)


@pytest.mark.parametrize("point, expected", [
    ("extracting", "a"), ("log-torn", "a"), ("log-grown", "a"), ("saving", "a"), ("renamed", "ab"),
])
def test_sigkill_at_each_point_leaves_old_or_new_and_a_rerun_completes(
        point: str, expected: str, tmp_path: Path, built: dict[str, Path], graph_bytes: dict[str, bytes],
        corpora: dict[str, Path], extractor: Any) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    log_before = (store_dir / INPUTS_FILE).stat().st_size
    assert _run_forked(_killed_build, point, store_dir, corpora["b"], extractor) == -signal.SIGKILL
    assert _state(store_dir, graph_bytes) == expected
    log = (store_dir / INPUTS_FILE).read_bytes()
    if point == "log-torn":
        assert not log.endswith(b"\n")  # the kill really cut a line
    elif point != "extracting":
        assert len(log) > log_before
    if point == "saving":
        assert list(store_dir.glob(f".{SNAPSHOT_FILE}.tmp*")), "the kill should have left a partial temporary file"

    _rerun(store_dir, corpora["b"], extractor)
    assert graph_dump(store_dir) == graph_bytes["ab"]
    assert not list(store_dir.glob("*.tmp*")) and not list(store_dir.glob(".*.tmp*"))
    # And the store keeps working: every stored paper's extraction is in the log (a torn line glued to the
    # next record would lose that record, and this build would fail to re-derive the graph).
    _rerun(store_dir, corpora["b"], extractor)
    assert graph_dump(store_dir) == graph_bytes["ab"]
    assert EmbeddedStore(store_dir).load_inputs().keys() == EmbeddedStore(built["ab"]).load_inputs().keys()


def test_keyboard_interrupt_during_save_keeps_the_old_graph(tmp_path: Path, built: dict[str, Path],
                                                            graph_bytes: dict[str, bytes], corpora: dict[str, Path],
                                                            extractor: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    real_write = embedded_module.write_snapshot

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        real_write(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(embedded_module, "write_snapshot", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _rerun(store_dir, corpora["b"], extractor)
    monkeypatch.undo()
    assert _state(store_dir, graph_bytes) == "a"
    assert not list(store_dir.glob(".*.tmp*"))
    _rerun(store_dir, corpora["b"], extractor)
    assert graph_dump(store_dir) == graph_bytes["ab"]


def _start_build(store_dir: Path, corpus: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*KG, "build", str(corpus), "--store-dir", str(store_dir), *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(cond: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 90) -> bool:
    """Poll ``cond`` until it holds (True) or the process exits first (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    raise AssertionError("timed out waiting for the build")


@pytest.mark.slow
@pytest.mark.parametrize("when", ["lock taken", "log grown"])
def test_sigkill_of_the_real_cli(when: str, tmp_path: Path, built: dict[str, Path], graph_bytes: dict[str, bytes],
                                 corpora: dict[str, Path], extractor: Any) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    log_before = (store_dir / INPUTS_FILE).stat().st_size
    proc = _start_build(store_dir, corpora["b"])
    if when == "lock taken":  # the build has opened the store: loading spaCy or extracting
        reached = _wait_for(lambda: (store_dir / LOCK_FILE).exists(), proc)
        time.sleep(0.3)
    else:
        reached = _wait_for(lambda: (store_dir / INPUTS_FILE).stat().st_size > log_before, proc)
    proc.kill()
    proc.communicate(timeout=30)
    assert reached or proc.returncode == 0
    assert _state(store_dir, graph_bytes) in ("a", "ab")
    r = kg("build", str(corpora["b"]), "--store-dir", str(store_dir), timeout=300)
    assert r.returncode == 0, r.stderr
    no_traceback(r.stderr)
    assert graph_dump(store_dir) == graph_bytes["ab"]


@pytest.mark.slow
def test_ctrl_c_is_one_clean_line_and_the_store_stays_consistent(tmp_path: Path, built: dict[str, Path],
                                                                 graph_bytes: dict[str, bytes],
                                                                 corpora: dict[str, Path]) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    proc = _start_build(store_dir, corpora["b"])
    assert _wait_for(lambda: (store_dir / LOCK_FILE).exists(), proc)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    no_traceback(err)
    if proc.returncode == 0:  # finished before the signal landed: nothing to check but the result
        assert _state(store_dir, graph_bytes) == "ab"
        return
    # Exit status 130 as a shell sees it: exit(130), or death by SIGINT. CPython picks the second when the
    # interrupt lands inside C-level code run by an import (PyRun_String sets a sticky "unhandled
    # KeyboardInterrupt" flag even though kg catches it), about 1 run in 60 when the signal comes during start-up.
    assert proc.returncode in (130, -signal.SIGINT), err
    assert err.strip().splitlines()[-1:] == ["kg: interrupted"], err
    assert _state(store_dir, graph_bytes) == "a"
    assert not list(store_dir.glob(".*.tmp*"))
    # The lock went with the process: the next build needs no --wait.
    r = kg("build", str(corpora["b"]), "--store-dir", str(store_dir), timeout=300)
    assert r.returncode == 0, r.stderr
    assert graph_dump(store_dir) == graph_bytes["ab"]


# A real `kg build` that holds the store until told to go on (the test wraps load_inputs, which a build calls
# first, from outside: nothing in kg waits for anything).
_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import kg.store.embedded as E
    from kg.cli import main
    ready, release = Path(sys.argv[1]), Path(sys.argv[2])
    real = E.EmbeddedStore.load_inputs
    def held(self):
        ready.touch()
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return real(self)
    E.EmbeddedStore.load_inputs = held
    sys.exit(main(sys.argv[3:]))
""")


@pytest.mark.slow
def test_a_second_build_refuses_or_waits(tmp_path: Path, built: dict[str, Path], graph_bytes: dict[str, bytes],
                                         corpora: dict[str, Path]) -> None:
    store_dir = _fresh_copy(built["a"], tmp_path / "s")
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(ready), str(release), "build",
                               str(corpora["b"]), "--store-dir", str(store_dir)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waiter: subprocess.Popen[str] | None = None
    try:
        assert _wait_for(ready.exists, holder), holder.communicate()[1]
        r = kg("build", str(corpora["b"]), "--store-dir", str(store_dir), timeout=120)
        assert r.returncode == 1
        no_traceback(r.stderr)
        assert r.stderr.strip().splitlines() == [
            f"kg: error: {store_dir}: another kg build (pid {holder.pid}) is writing this store; wait for it to finish "
            f"(or pass --wait)"]
        assert _state(store_dir, graph_bytes) == "a"  # untouched by the refused build

        waiter = _start_build(store_dir, corpora["b"], "--wait")
        time.sleep(3)
        assert waiter.poll() is None, "a build with --wait should be waiting for the lock"
        release.touch()
        out, err = holder.communicate(timeout=120)
        assert holder.returncode == 0, err
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, err
        no_traceback(err)
        assert "read 20 papers (0 extracted, 20 unchanged)" in out  # it ran after the first, on its result
        assert graph_dump(store_dir) == graph_bytes["ab"]
    finally:
        release.touch()
        for p in (holder, waiter):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
