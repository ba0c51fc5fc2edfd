"""Tokenizer for Cypher text: strings, comments, numbers, identifiers, parameters, operators."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kg.cypher.errors import CypherSyntaxError

# Longest operators first so that '<>' wins over '<'.
_MULTI_OPS = ("<>", "<=", ">=", "=~", "!=", "..", "+=")
_SINGLE_OPS = set("()[]{},:.|+-*/%^=<>;&!")
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", "'": "'", '"': '"', "\\": "\\"}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token; `pos`/`end` are offsets into the query text."""

    kind: str  # IDENT, QIDENT (backtick-quoted), STRING, INT, FLOAT, PARAM, OP, EOF
    value: str | int | float
    pos: int
    end: int
    line: int
    col: int

    @property
    def upper(self) -> str:
        # Only bare identifiers can be keywords: a backticked `MATCH` is a name.
        return self.value.upper() if self.kind == "IDENT" and isinstance(self.value, str) else ""

    def describe(self) -> str:
        if self.kind == "EOF":
            return "end of input"
        if self.kind == "STRING":
            return f"string {self.value!r}"
        if self.kind == "PARAM":
            return f"'${self.value}'"
        return f"'{self.value}'"


def line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _error(text: str, pos: int, msg: str) -> CypherSyntaxError:
    line, col = line_col(text, pos)
    return CypherSyntaxError(f"line {line}, column {col}: {msg}")


def _is_ident_start(ch: str) -> bool:
    return ch.isalpha() or ch == "_"


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _read_string(text: str, i: int) -> tuple[str, int]:
    quote = text[i]
    out: list[str] = []
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == quote:
            return "".join(out), j + 1
        if ch == "\\":
            if j + 1 >= n:
                break
            nxt = text[j + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                j += 2
            elif nxt in "uU":
                width = 4 if nxt == "u" else 8
                digits = text[j + 2 : j + 2 + width]
                try:
                    out.append(chr(int(digits, 16)))
                except ValueError:
                    raise _error(text, j, f"invalid unicode escape '\\{nxt}{digits}'") from None
                j += 2 + width
            else:
                # Keep unknown escapes verbatim so regexes like '\d' behave as users expect.
                out.append("\\" + nxt)
                j += 2
            continue
        out.append(ch)
        j += 1
    raise _error(text, i, "unterminated string literal")


INT_MAX = 2**63 - 1  # Cypher integers are 64-bit; the lexer allows 2**63 for a literal the parser negates


def _integer(text: str, i: int, j: int, digits: str, base: int) -> tuple[str, int, int]:
    if j < len(text) and _is_ident_char(text[j]):
        raise _error(text, i, f"invalid number literal '{text[i:j + 1]}'")
    if not digits:
        raise _error(text, i, f"invalid number literal '{text[i:j]}'")
    digits = digits.lstrip("0") or "0"  # leading zeros add no size: 10,000 zeros are 0
    # Checked on length first: int() of a 5,000-digit decimal string raises ValueError in Python.
    if len(digits) > {10: 19, 16: 16, 8: 22}[base] or int(digits, base) > INT_MAX + 1:
        raise _error(text, i, f"integer literal too large for 64 bits '{text[i:j][:25]}'")
    return "INT", int(digits, base), j


def _is_digit(ch: str) -> bool:
    """An ASCII digit: str.isdigit() also accepts superscripts and other scripts' digits, which int() refuses."""
    return len(ch) == 1 and "0" <= ch <= "9"


def _read_number(text: str, i: int) -> tuple[str, int | float, int]:
    n = len(text)
    for prefix, base, allowed in (("0x", 16, "0123456789abcdefABCDEF"), ("0o", 8, "01234567")):
        if text.startswith((prefix, prefix.upper()), i):
            j = i + 2
            while j < n and text[j] in allowed:
                j += 1
            return _integer(text, i, j, text[i + 2 : j], base)
    j = i
    while j < n and _is_digit(text[j]):
        j += 1
    is_float = False
    # '1..3' is a range, so a '.' only starts a fraction when a digit follows it; `.5` has no integer digits.
    if j + 1 < n and text[j] == "." and _is_digit(text[j + 1]):
        is_float = True
        j += 1
        while j < n and _is_digit(text[j]):
            j += 1
    if j < n and text[j] in "eE":
        k = j + 1
        if k < n and text[k] in "+-":
            k += 1
        if k < n and _is_digit(text[k]):
            is_float = True
            j = k
            while j < n and _is_digit(text[j]):
                j += 1
    if j < n and _is_ident_start(text[j]):
        raise _error(text, i, f"invalid number literal '{text[i:j + 1]}'")
    raw = text[i:j]
    if not is_float:
        return _integer(text, i, j, raw, 10)
    value = float(raw)
    if math.isinf(value):
        raise _error(text, i, f"float literal too large for 64 bits '{raw[:25]}'")
    return "FLOAT", value, j


def _read_backtick(text: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    j = i + 1
    while j < len(text):
        if text[j] == "`":
            if text.startswith("``", j):  # doubled backtick escapes itself
                out.append("`")
                j += 2
                continue
            return "".join(out), j + 1
        out.append(text[j])
        j += 1
    raise _error(text, i, "unterminated backtick-quoted name")


def tokenize(text: str) -> list[Token]:
    """Split `text` into tokens, dropping whitespace and comments; always ends with EOF."""
    tokens: list[Token] = []
    i = 0
    n = len(text)
    line, line_start = 1, 0

    def add(kind: str, value: str | int | float, start: int, end: int) -> None:
        tokens.append(Token(kind, value, start, end, line, start - line_start + 1))

    while i < n:
        ch = text[i]
        if ch == "\n":
            line, line_start = line + 1, i + 1
            i += 1
        elif ch.isspace():
            i += 1
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                raise _error(text, i, "unterminated /* comment")
            for k in range(i, close):
                if text[k] == "\n":
                    line, line_start = line + 1, k + 1
            i = close + 2
        elif ch in "'\"":
            value, j = _read_string(text, i)
            add("STRING", value, i, j)
            for k in range(i, j):
                if text[k] == "\n":
                    line, line_start = line + 1, k + 1
            i = j
        elif _is_digit(ch) or (ch == "." and _is_digit(text[i + 1 : i + 2]) and text[i - 1 : i] != "."):
            kind, num, j = _read_number(text, i)
            add(kind, num, i, j)
            i = j
        elif _is_ident_start(ch):
            j = i + 1
            while j < n and _is_ident_char(text[j]):
                j += 1
            add("IDENT", text[i:j], i, j)
            i = j
        elif ch == "`":
            name, j = _read_backtick(text, i)
            add("QIDENT", name, i, j)
            i = j
        elif ch == "$":
            j = i + 1
            if j < n and text[j] == "`":
                name, j = _read_backtick(text, j)
            else:
                while j < n and _is_ident_char(text[j]):
                    j += 1
                name = text[i + 1 : j]
                if not name:
                    raise _error(text, i, "expected a parameter name after '$'")
            add("PARAM", name, i, j)
            i = j
        else:
            op = next((m for m in _MULTI_OPS if text.startswith(m, i)), None)
            if op is None and ch in _SINGLE_OPS:
                op = ch
            if op is None:
                raise _error(text, i, f"unexpected character {ch!r}")
            add("OP", op, i, i + len(op))
            i += len(op)
    tokens.append(Token("EOF", "", n, n, line, n - line_start + 1))
    return tokens
