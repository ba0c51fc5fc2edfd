"""Clause-level Cypher parser: turns query text into a `Query` syntax tree."""

from __future__ import annotations

from kg.cypher.ast import (
    Call,
    Clause,
    Expr,
    Match,
    PathPattern,
    Projection,
    Query,
    Return,
    ReturnItem,
    SingleQuery,
    Unwind,
    Var,
    With,
)
from kg.cypher.errors import CypherSyntaxError, CypherWriteError, UnsupportedCypher
from kg.cypher.lexer import Token, tokenize
from kg.cypher.parser_expr import ExprParser
from kg.cypher.readonly import PROCEDURE_COLUMNS, SERVER_READ_PROCEDURES, WRITE_CLAUSES, check_tokens
from kg.cypher.semantics import check_query

_CLAUSE_HINT = "a clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN)"
_UNSUPPORTED_CLAUSES = {
    "EXPLAIN": "EXPLAIN", "PROFILE": "PROFILE", "FINISH": "FINISH", "MANDATORY": "MANDATORY MATCH",
    "SHOW": "SHOW commands", "USING": "USING hints", "NEXT": "NEXT (GQL composition)",
    "LET": "LET", "FILTER": "FILTER", "ORDER": "ORDER BY outside RETURN/WITH",
}


class Parser(ExprParser):
    """Entry point: `Parser(text).parse_query()`."""

    def parse_query(self) -> Query:
        parts = [self._single_query()]
        union_all: bool | None = None
        while self.accept_kw("UNION"):
            this_all = self.accept_kw("ALL")
            if union_all is not None and union_all != this_all:
                raise CypherSyntaxError("cannot mix UNION and UNION ALL in one query")
            union_all = this_all
            parts.append(self._single_query())
        if self.accept_op(";") and self.tok.kind != "EOF":
            raise CypherWriteError("multiple statements are not allowed (found ';' followed by more text)")
        if self.tok.kind != "EOF":
            raise self.error(_CLAUSE_HINT)
        return Query(tuple(parts), bool(union_all), frozenset(self.params))

    def _single_query(self) -> SingleQuery:
        clauses: list[Clause] = []
        while self.tok.kind != "EOF" and not self.at_kw("UNION") and not self.at_op(";"):
            if clauses and isinstance(clauses[-1], Return):
                raise self.error("end of query after RETURN")
            clauses.append(self._clause())
        if not clauses:
            raise self.error(_CLAUSE_HINT)
        last = clauses[-1]
        standalone_call = len(clauses) == 1 and isinstance(last, Call)
        if not isinstance(last, Return) and not standalone_call:
            kind = type(last).__name__.upper()
            raise CypherSyntaxError(f"query cannot conclude with {kind} (it must end with RETURN)")
        for clause in clauses[:-1]:
            if isinstance(clause, Call) and clause.yields is None:
                raise CypherSyntaxError("CALL inside a larger query needs YIELD")
        return SingleQuery(tuple(clauses))

    def _clause(self) -> Clause:
        kw = self.tok.upper
        if kw in WRITE_CLAUSES:
            raise CypherWriteError(f"{WRITE_CLAUSES[kw]} is not allowed: queries are read-only")
        if kw == "OPTIONAL":
            self.advance()
            self.expect_kw("MATCH")
            return self._match(optional=True)
        if kw == "MATCH":
            self.advance()
            return self._match(optional=False)
        if kw == "UNWIND":
            self.advance()
            expr = self.parse_expr()
            self.expect_kw("AS")
            return Unwind(expr, self.name("a variable"))
        if kw == "WITH":
            self.advance()
            proj = self._projection(is_with=True)
            where = self._where_expr() if self.accept_kw("WHERE") else None
            return With(proj, where)
        if kw == "RETURN":
            self.advance()
            return Return(self._projection(is_with=False))
        if kw == "CALL":
            return self._call_clause()
        if kw in _UNSUPPORTED_CLAUSES:
            raise UnsupportedCypher(_UNSUPPORTED_CLAUSES[kw])
        raise self.error(_CLAUSE_HINT)

    def _match(self, optional: bool) -> Match:
        patterns: list[PathPattern] = [self.parse_pattern_part()]
        while self.accept_op(","):
            patterns.append(self.parse_pattern_part())
        if self.at_kw("USING"):
            raise UnsupportedCypher("USING index/scan/join hints")
        where = self._where_expr() if self.accept_kw("WHERE") else None
        return Match(tuple(patterns), where, optional)

    def _call_clause(self) -> Call:
        call_tok = self.advance()
        if self.at_op("{") or self.at_op("("):
            raise CypherWriteError("CALL subqueries are not allowed: queries are read-only")
        parts = [self.name("a procedure name")]
        while self.accept_op("."):
            parts.append(self.name("a procedure name"))
        proc = ".".join(parts)
        if proc.lower() in SERVER_READ_PROCEDURES and proc.lower() not in PROCEDURE_COLUMNS:
            raise UnsupportedCypher(f"procedure {proc}() in the embedded engine")
        if proc.lower() not in PROCEDURE_COLUMNS:
            raise CypherWriteError(
                f"CALL {proc} is not allowed: only db.labels(), db.relationshipTypes() "
                "and db.propertyKeys() may be called"
            )
        if self.accept_op("("):
            self.expect_op(")")
        column = PROCEDURE_COLUMNS[proc.lower()]
        yields: list[tuple[str, str]] | None = None
        where: Expr | None = None
        if self.accept_kw("YIELD"):
            yields = []
            while True:
                col = self.name("a YIELD column")
                if col != column:
                    raise CypherSyntaxError(
                        f"line {call_tok.line}: {proc} yields only `{column}`, not `{col}`"
                    )
                alias = self.name("a variable") if self.accept_kw("AS") else col
                yields.append((col, alias))
                if not self.accept_op(","):
                    break
            where = self._where_expr() if self.accept_kw("WHERE") else None
        return Call(proc.lower(), None if yields is None else tuple(yields), where)

    def _projection(self, is_with: bool) -> Projection:
        distinct = self.accept_kw("DISTINCT")
        star = self.accept_op("*")
        items: list[ReturnItem] = []
        if not star or self.accept_op(","):
            while True:
                items.append(self._return_item(is_with))
                if not self.accept_op(","):
                    break
        order: list[tuple[Expr, bool]] = []
        if self.at_kw("ORDER"):
            self.advance()
            self.expect_kw("BY")
            while True:
                expr = self.parse_expr()
                desc = False
                if self.at_kw("DESC", "DESCENDING"):
                    desc = True
                    self.advance()
                elif self.at_kw("ASC", "ASCENDING"):
                    self.advance()
                order.append((expr, desc))
                if not self.accept_op(","):
                    break
        skip = self.parse_expr() if (self.accept_kw("SKIP") or self.accept_kw("OFFSET")) else None
        limit = self.parse_expr() if self.accept_kw("LIMIT") else None
        return Projection(distinct, star, tuple(items), tuple(order), skip, limit)

    def _return_item(self, is_with: bool) -> ReturnItem:
        start = self.i
        expr = self.parse_expr()
        text = self.source_since(start)
        if self.accept_kw("AS"):
            return ReturnItem(expr, self.name("an alias"), True)
        if isinstance(expr, Var):
            return ReturnItem(expr, expr.name, True)
        if is_with:
            raise CypherSyntaxError(f"expression in WITH must be aliased (use AS): {text}")
        return ReturnItem(expr, text, False)


def parse(text: str, toks: list[Token] | None = None) -> Query:
    """Parse and statically check `text` (given its tokens ``toks``, or tokenizing it); raises CypherSyntaxError
    (CypherTypeError for a property read on a value that cannot have properties), CypherWriteError or
    UnsupportedCypher."""
    query = Parser(text, toks).parse_query()
    check_query(query)
    return query


def parse_read_only(text: str) -> Query:
    """The engine's front end: tokenize `text` once, refuse anything that could write (`readonly.check_tokens`,
    whose CypherWriteError comes before any syntax error the parser would find), then parse and check the
    same tokens."""
    toks = tokenize(text)
    check_tokens(toks)
    return parse(text, toks)
