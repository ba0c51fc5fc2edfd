"""Exceptions raised by the read-only Cypher engine."""

from __future__ import annotations

from kg.errors import KGError


class CypherError(KGError):
    """Base class of every error the Cypher engine raises (also used for runtime type errors)."""


class CypherSyntaxError(CypherError):
    """The query text cannot be parsed; the message gives line:column and what was expected."""


class CypherWriteError(CypherError):
    """The query contains a clause that could modify data or the server; the message names it."""


class CypherTimeout(CypherError):
    """The query ran past its time budget."""


class UnsupportedCypher(CypherError):
    """Valid Cypher outside the subset this engine implements; the message names the feature."""
