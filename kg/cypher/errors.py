"""Exceptions raised by the read-only Cypher engine."""

from __future__ import annotations

from kg.errors import KGError


class CypherError(KGError):
    """Base class of every error the Cypher engine raises (also used for runtime type errors)."""


class CypherSyntaxError(CypherError):
    """The query is invalid before it runs: it cannot be parsed (the message gives line:column and what was
    expected) or a static check fails (undefined variable, misplaced aggregate, literal of the wrong type)."""


class CypherTypeError(CypherError):
    """A value of the wrong type for an operator, function or clause (the openCypher TypeError)."""


class CypherArgumentError(CypherError):
    """An argument of the right type but an invalid value, e.g. out of range (the openCypher ArgumentError)."""


class CypherWriteError(CypherError):
    """The query contains a clause that could modify data or the server; the message names it."""


class CypherTimeout(CypherError):
    """The query ran past its time budget."""


class UnsupportedCypher(CypherError):
    """Valid Cypher outside the subset this engine implements; the message names the feature."""
