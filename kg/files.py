"""Opening files that must be plain files: the store's and the inputs'.

A FIFO in a file's place blocks ``open`` until something writes to it (forever, in practice), a device such as
``/dev/zero`` never ends, and a directory or a dangling link makes ``open`` fail with an error of its own. kg
opens such files without blocking (``O_NONBLOCK``) and reads only what ``fstat`` says is a regular file, so each
of them is one clear line naming the file and what it is, never a hang or a traceback. A symbolic link to a
regular file is read as that file.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

LINK_TO_NOWHERE = "a link to nowhere"
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISLNK, "a symbolic link"))


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a FIFO", "a directory")."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class NotAFile(OSError):
    """A path that should be a regular file is something else (a FIFO, a device, a directory, a dangling link);
    an OSError, so code that reports unreadable files reports it too."""

    def __init__(self, path: str | os.PathLike[str], what: str) -> None:
        super().__init__(f"{os.fspath(path)} is {what}, not a regular file")
        self.path = Path(path)
        self.what = what

    def __str__(self) -> str:
        return str(self.args[0])


def odd_file(path: str | os.PathLike[str]) -> str | None:
    """None when ``path`` is absent or a regular file (or a link to one); else what it is, in words: "a FIFO",
    "a directory", "a link to nowhere (-> target)". Only ``stat``: never opens it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        try:
            target = os.readlink(path)
        except OSError:
            return None  # absent
        return f"{LINK_TO_NOWHERE} (-> {target})"
    except OSError as exc:  # a link loop, a path through a file, no permission
        return f"unreadable ({exc.strerror or exc})"
    return None if stat.S_ISREG(st.st_mode) else kind_of(st.st_mode)


def _open_raw(path: str | os.PathLike[str]) -> io.FileIO:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.islink(path):
            raise NotAFile(path, f"{LINK_TO_NOWHERE} (-> {os.readlink(path)})") from None
        raise
    except OSError as exc:  # a socket (ENXIO) or another odd file that cannot be opened at all
        if os.path.exists(path) and not os.path.isfile(path):
            raise NotAFile(path, kind_of(os.stat(path).st_mode)) from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFile(path, kind_of(mode))
        os.set_blocking(fd, True)
        raw = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    raw.name = os.fspath(path)  # not the descriptor's number: messages name the file
    return raw


def open_regular(path: str | os.PathLike[str], buffering: int = -1) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file (or a link to one); else NotAFile. Never
    blocks: a FIFO is opened with ``O_NONBLOCK`` (which returns at once) and refused."""
    raw = _open_raw(path)
    return raw if buffering == 0 else io.BufferedReader(raw, buffering if buffering > 0 else io.DEFAULT_BUFFER_SIZE)


def open_input(path: str | os.PathLike[str]) -> BinaryIO | gzip.GzipFile:
    """``open_regular``, through gzip when the name ends in ``.gz``."""
    if not os.fspath(path).endswith(".gz"):
        return open_regular(path)
    raw = _open_raw(path)
    try:
        gz = gzip.GzipFile(fileobj=raw, mode="rb")
    except BaseException:
        raw.close()
        raise
    gz.myfileobj = raw  # closed with the GzipFile, as when gzip.open opens the file itself
    return gz
