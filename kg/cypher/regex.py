"""`=~` in linear time: patterns compile with RE2, so no pattern and no input can backtrack catastrophically.

Cypher's `=~` takes Java regular expressions. RE2 reads most of what users write the same way: character
classes, `\\d \\w \\s \\b`, `\\p{L}`, POSIX classes, `(?i)` `(?s)` `(?m)` flags, `\\Q...\\E`, named groups, lazy
quantifiers. What needs backtracking is refused with a CypherError (HTTP 400) that says so:
backreferences (`\\1`), lookahead and lookbehind (`(?=` `(?!` `(?<=` `(?<!`), possessive quantifiers (`a++`),
atomic groups (`(?>`), and Java's class intersection (`[a-z&&[^e]]`), which RE2 would read differently.
"""

from __future__ import annotations

from typing import Any

from kg.cypher.errors import CypherError

REFUSED = ("RE2 matches in linear time, so backreferences, lookaround, possessive quantifiers and atomic groups "
           "are not supported")
MAX_PATTERN_MEMORY = 32 << 20  # RE2's compiled-program budget; a bigger pattern is refused, not slow
_OPTIONS: Any = None


def compile_regex(pattern: str) -> Any:
    """A compiled pattern whose ``fullmatch`` runs in time linear in the input; CypherError if unsupported."""
    global _OPTIONS
    try:
        import re2
    except ImportError:  # a runtime dependency; say how to get it rather than fall back to backtracking
        raise CypherError("=~ needs the google-re2 package: pip install google-re2") from None
    if _OPTIONS is None:
        _OPTIONS = re2.Options()
        _OPTIONS.log_errors = False  # the CypherError says it; nothing on the server's stderr
        _OPTIONS.max_mem = MAX_PATTERN_MEMORY
    if "&&" in pattern and "[" in pattern:
        raise CypherError(f"invalid regular expression {pattern!r}: Java's character-class intersection "
                          f"('&&') is not supported")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        raise CypherError(f"invalid regular expression {pattern!r}: {why} ({REFUSED})") from None
