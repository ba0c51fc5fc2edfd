"""Token-level read-only guard, shared by the embedded engine and the Neo4j-backed store."""

from __future__ import annotations

from kg.cypher.errors import CypherError, CypherWriteError
from kg.cypher.lexer import Token, tokenize

# Clause keyword -> the name used in the error message. Refused wherever they could start a clause.
WRITE_CLAUSES: dict[str, str] = {
    "CREATE": "CREATE", "MERGE": "MERGE", "SET": "SET", "DELETE": "DELETE",
    "DETACH": "DETACH DELETE", "NODETACH": "NODETACH DELETE", "REMOVE": "REMOVE", "DROP": "DROP",
    "LOAD": "LOAD CSV", "FOREACH": "FOREACH", "INSERT": "INSERT", "USE": "USE",
}
# Administration commands; they can only start a statement, so they are refused only there.
ADMIN_COMMANDS = {
    "GRANT", "REVOKE", "DENY", "ALTER", "RENAME", "START", "STOP", "SHOW", "TERMINATE", "ENABLE",
    "DEALLOCATE", "REALLOCATE", "DRYRUN",
}
# Procedures the embedded engine implements -> the single column each yields.
PROCEDURE_COLUMNS = {
    "db.labels": "label",
    "db.relationshiptypes": "relationshipType",
    "db.propertykeys": "propertyKey",
}
# Read-only procedures a Neo4j server may be asked to run (lower-cased names).
SERVER_READ_PROCEDURES = frozenset(PROCEDURE_COLUMNS) | {
    "db.schema.visualization", "db.schema.nodetypeproperties", "db.schema.reltypeproperties",
}
# APOC namespaces whose members are pure functions; every other apoc.* name may write.
_APOC_PURE = {"text", "coll", "map", "convert", "math", "number", "agg", "date", "temporal"}
_NAME_OR_CLOSE = ("IDENT", "QIDENT", "PARAM")


def _is_op(tok: Token | None, *ops: str) -> bool:
    return tok is not None and tok.kind == "OP" and tok.value in ops


def is_name_position(prev: Token | None, prev2: Token | None, nxt: Token | None) -> bool:
    """True where a keyword-looking word can only be a name: property, label, map key, variable."""
    if _is_op(prev, ".") and prev2 is not None and (
        prev2.kind in _NAME_OR_CLOSE or _is_op(prev2, ")", "]", "}")
    ):
        return True  # n.set
    if _is_op(prev, ":"):
        return True  # (n:Set), -[:DELETE]-, {k: ...} values cannot start a clause either
    if _is_op(prev, "{", ",") and _is_op(nxt, ":"):
        return True  # {start: 0}
    if _is_op(prev, "(") and _is_op(nxt, ":", ")", "{"):
        return True  # (start:Paper)
    return _is_op(prev, "[") and _is_op(nxt, ":", "]", "*", "{")  # -[set:T]-


def _dotted_name(toks: list[Token], k: int) -> str:
    parts = [str(toks[k].value)]
    while _is_op(toks[k + 1], ".") and toks[k + 2].kind in ("IDENT", "QIDENT"):
        parts.append(str(toks[k + 2].value))
        k += 2
    return ".".join(parts)


def _statement_start(toks: list[Token], k: int) -> bool:
    before = [t for t in toks[:k] if t.upper not in ("EXPLAIN", "PROFILE")]
    return not before or before[0].upper == "CYPHER" or _is_op(before[-1], ";")


def check_tokens(toks: list[Token]) -> None:
    """Raise CypherWriteError naming the first clause in `toks` that is not read-only."""
    for k, tok in enumerate(toks):
        if tok.kind == "OP" and tok.value == ";" and toks[k + 1].kind != "EOF":
            raise CypherWriteError("multiple statements are not allowed (found ';' followed by more text)")
        word = tok.upper
        if not word:
            continue
        prev = toks[k - 1] if k > 0 else None
        prev2 = toks[k - 2] if k > 1 else None
        nxt = toks[k + 1]
        if is_name_position(prev, prev2, nxt):
            continue
        if word in WRITE_CLAUSES:
            raise CypherWriteError(f"{WRITE_CLAUSES[word]} is not allowed: queries are read-only")
        if word in ADMIN_COMMANDS and _statement_start(toks, k):
            raise CypherWriteError(f"administration command {word} is not allowed")
        if word == "CALL":
            if _is_op(nxt, "{", "("):
                raise CypherWriteError("CALL subqueries are not allowed: queries are read-only")
            if nxt.kind not in ("IDENT", "QIDENT"):
                raise CypherWriteError("CALL is not allowed: queries are read-only")
            proc = _dotted_name(toks, k + 1)
            if proc.lower() not in SERVER_READ_PROCEDURES:
                raise CypherWriteError(f"CALL {proc} is not allowed: only read-only db.* procedures may be called")
        if word == "APOC" and _is_op(nxt, "."):
            name = _dotted_name(toks, k)
            namespace = name.split(".")[1].lower() if "." in name else ""
            if namespace not in _APOC_PURE:
                raise CypherWriteError(f"{name} is not allowed: apoc procedures may write")


def check_read_only(query: str) -> None:
    """Raise CypherWriteError if `query` could modify data (CypherSyntaxError if it cannot be tokenized)."""
    check_tokens(tokenize(query))


def is_read_only(query: str) -> bool:
    """True if `query` passes `check_read_only`; unparseable text counts as not read-only."""
    try:
        check_read_only(query)
    except CypherError:
        return False
    return True
