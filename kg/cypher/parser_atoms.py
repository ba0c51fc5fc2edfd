"""Parsing of compound expression atoms: lists, comprehensions, maps, CASE, calls, subqueries."""

from __future__ import annotations

from kg.cypher.ast import (
    Case,
    Clause,
    Expr,
    FuncCall,
    ListComp,
    ListLit,
    Literal,
    MapLit,
    MapProj,
    Param,
    PathPattern,
    PatternComp,
    PatternExpr,
    Quantifier,
    Reduce,
    Return,
    SingleQuery,
    Subquery,
)
from kg.cypher.errors import CypherSyntaxError, UnsupportedCypher
from kg.cypher.parser_base import PatternParser


class AtomParser(PatternParser):
    """Atoms that need more than one token of look-ahead; `parse_expr` comes from ExprParser."""

    def _map_projection(self, subject: Expr) -> Expr:
        self.expect_op("{")
        items: list[tuple[str, str, Expr | None]] = []
        while not self.at_op("}"):
            if self.accept_op("."):
                if self.accept_op("*"):
                    items.append(("all", "", None))
                else:
                    items.append(("prop", self.name("a property key"), None))
            elif self.at_name() and self.at_op(":", tok=self.peek()):
                key = self.name()
                self.advance()
                items.append(("kv", key, self.parse_expr()))
            else:
                items.append(("var", self.name("a map projection item"), None))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return MapProj(subject, tuple(items))

    def parse_param(self) -> Expr:
        tok = self.advance()
        if tok.kind != "PARAM":
            raise self.error("a parameter", tok)
        self.params.add(str(tok.value))
        return Param(str(tok.value))

    def parse_map_literal(self) -> Expr:
        self.expect_op("{")
        items: list[tuple[str, Expr]] = []
        while not self.at_op("}"):
            key = str(self.advance().value) if self.tok.kind == "STRING" else self.name("a map key")
            self.expect_op(":")
            items.append((key, self.parse_expr()))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return MapLit(tuple(items))

    def _try_pattern(self) -> PathPattern | None:
        """Speculatively parse a relationship pattern; None (cursor unchanged) if it is not one."""
        start = self.i
        try:
            self.parse_node()
            if not self.at_rel_start():
                self.i = start
                return None
            self.i = start
            nodes, rels = self.parse_chain()
            return PathPattern(None, nodes, rels)
        except (CypherSyntaxError, UnsupportedCypher):
            self.i = start
            return None

    def _list(self) -> Expr:
        self.expect_op("[")
        if self.at_name() and self.peek().upper == "IN":
            var = self.name()
            self.advance()
            source = self.parse_expr()
            where = self._where_expr() if self.accept_kw("WHERE") else None
            proj = self.parse_expr() if self.accept_op("|") else None
            self.expect_op("]")
            return ListComp(var, source, where, proj)
        comp = self._try_pattern_comprehension()
        if comp is not None:
            return comp
        items: list[Expr] = []
        while not self.at_op("]"):
            items.append(self.parse_expr())
            if not self.accept_op(","):
                break
        self.expect_op("]")
        literals = [e for e in items if isinstance(e, Literal)]
        if len(literals) == len(items):
            return Literal([e.value for e in literals])
        return ListLit(tuple(items))

    def _try_pattern_comprehension(self) -> Expr | None:
        start = self.i
        var = None
        if self.at_name() and self.at_op("=", tok=self.peek()):
            var = self.name()
            self.advance()
        if not self.at_op("("):
            self.i = start
            return None
        pattern = self._try_pattern()
        if pattern is None or not (self.at_kw("WHERE") or self.at_op("|")):
            self.i = start
            return None
        pattern = PathPattern(var, pattern.nodes, pattern.rels)
        where = self._where_expr() if self.accept_kw("WHERE") else None
        self.expect_op("|")
        proj = self.parse_expr()
        self.expect_op("]")
        return PatternComp(pattern, where, proj)

    def _where_expr(self) -> Expr:
        self.bare_pattern_ok += 1
        try:
            return self.parse_expr()
        finally:
            self.bare_pattern_ok -= 1

    def _case(self) -> Expr:
        self.expect_kw("CASE")
        subject = None if self.at_kw("WHEN") else self.parse_expr()
        whens: list[tuple[Expr, Expr]] = []
        while self.accept_kw("WHEN"):
            cond = self.parse_expr()
            self.expect_kw("THEN")
            whens.append((cond, self.parse_expr()))
        if not whens:
            raise self.error("WHEN")
        default = self.parse_expr() if self.accept_kw("ELSE") else None
        self.expect_kw("END")
        return Case(subject, tuple(whens), default)

    def _subquery(self, kind: str) -> Expr:
        self.advance()
        self.expect_op("{")
        start = self.i
        name = "exists" if kind == "EXISTS" else "count"
        try:  # the short form: [MATCH] pattern, ... [WHERE ...]
            self.accept_kw("MATCH")
            patterns = [self.parse_pattern_part()]
            while self.accept_op(","):
                patterns.append(self.parse_pattern_part())
            where = self._where_expr() if self.accept_kw("WHERE") else None
            if self.accept_op("}"):
                return PatternExpr(name, tuple(patterns), where, subquery=True)
        except CypherSyntaxError:
            pass
        self.i = start  # the full form: clauses, RETURN optional
        clauses: list[Clause] = []
        while not self.at_op("}"):
            if self.tok.kind == "EOF" or self.at_kw("UNION"):
                raise self.error("'}'" if self.tok.kind == "EOF" else f"a clause (UNION inside {kind} {{ }})")
            if clauses and isinstance(clauses[-1], Return):
                raise self.error("'}' after RETURN")
            clauses.append(self._clause())
        self.advance()
        if not clauses:
            raise self.error("a clause")
        return Subquery(name, SingleQuery(tuple(clauses)))

    def _call(self) -> Expr:
        parts = [self.name()]
        while self.accept_op("."):
            parts.append(self.name())
        name = ".".join(parts).lower()
        self.expect_op("(")
        if name in ("any", "all", "none", "single") and self.at_name() and self.peek().upper == "IN":
            var = self.name()
            self.advance()
            source = self.parse_expr()
            self.expect_kw("WHERE")
            where = self._where_expr()
            self.expect_op(")")
            return Quantifier(name, var, source, where)
        if name == "reduce":
            acc = self.name()
            self.expect_op("=")
            init = self.parse_expr()
            self.expect_op(",")
            var = self.name()
            self.expect_kw("IN")
            source = self.parse_expr()
            self.expect_op("|")
            body = self.parse_expr()
            self.expect_op(")")
            return Reduce(acc, init, var, source, body)
        if name in ("shortestpath", "allshortestpaths"):
            raise UnsupportedCypher(f"{name}() as an expression (use it in MATCH p = {name}(...))")
        if name == "count" and self.accept_op("*"):
            self.expect_op(")")
            return FuncCall("count", (), star=True)
        distinct = self.accept_kw("DISTINCT")
        args: list[Expr] = []
        counts_pattern = name in ("size", "exists")
        if counts_pattern:
            self.bare_pattern_ok += 1
        try:
            while not self.at_op(")"):
                args.append(self.parse_expr())
                if not self.accept_op(","):
                    break
        finally:
            if counts_pattern:
                self.bare_pattern_ok -= 1
        self.expect_op(")")
        if counts_pattern and len(args) == 1 and isinstance(args[0], PatternExpr):
            return PatternExpr("count" if name == "size" else "exists", args[0].patterns, None)
        return FuncCall(name, tuple(args), distinct=distinct)
