"""The `kg` command line: a thin layer over the library; user errors become one line, never a traceback."""

from kg.cli.main import cli, main

__all__ = ["cli", "main"]
