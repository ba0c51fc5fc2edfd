"""Build progress: a bar with rate and ETA on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:d}:{s:02d}"


class Progress:
    """Call with the number of papers done; it decides when and how to show it."""

    def __init__(self, total: int | None, *, stream: TextIO | None = None, tty: bool | None = None,
                 line_every: float = 30.0) -> None:
        self.total = total
        self.stream = stream = stream if stream is not None else sys.stderr
        self.tty = stream.isatty() if tty is None else tty
        self.every = 0.2 if self.tty else line_every
        self.start = time.monotonic()
        self.last = self.start  # nothing for builds shorter than one interval
        self.done = 0

    def __call__(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        self._show(now)

    def _text(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.done:,}" + (f"/{self.total:,}" if self.total else "") + " papers", f"{rate:,.1f}/s"]
        if self.total and rate > 0 and self.done < self.total:
            parts.append(f"ETA {_clock((self.total - self.done) / rate)}")
        parts.append(f"elapsed {_clock(elapsed)}")
        return "  ".join(parts)

    def _show(self, now: float) -> None:
        if self.tty:
            bar = ""
            if self.total:
                frac = min(1.0, self.done / self.total)
                bar = "[" + "#" * int(30 * frac) + "." * (30 - int(30 * frac)) + f"] {100 * frac:5.1f}%  "
            self.stream.write("\r\x1b[2K" + bar + self._text(now))
        else:
            self.stream.write("kg: " + self._text(now) + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty:
            self._show(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
