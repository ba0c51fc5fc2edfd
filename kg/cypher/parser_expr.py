"""Recursive-descent parser for Cypher expressions, following openCypher operator precedence."""

from __future__ import annotations

from kg.cypher.ast import (
    BoolOp, Case, Compare, Expr, FuncCall, HasLabels, Index, IsNull, ListComp, ListLit, Literal,
    MapLit, MapProj, Param, PathPattern, PatternComp, PatternExpr, Prop, Quantifier, Reduce,
    Slice, Unary, Var, Binary,
)
from kg.cypher.errors import CypherSyntaxError, UnsupportedCypher
from kg.cypher.parser_base import PatternParser

_COMPARE_OPS = ("=", "<>", "!=", "<", ">", "<=", ">=")
# Words that start a clause can never be a variable, so a dangling operator gets a clear error.
_CLAUSE_WORDS = {
    "MATCH", "OPTIONAL", "RETURN", "WITH", "WHERE", "UNWIND", "ORDER", "SKIP", "LIMIT", "UNION",
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "CALL", "AS", "BY", "THEN", "ELSE",
    "END", "WHEN", "AND", "OR", "XOR", "FOREACH", "LOAD", "USE",
}


class ExprParser(PatternParser):
    """Expression grammar; `parse_expr` is the entry point."""

    def parse_expr(self) -> Expr:
        return self._or()

    def _or(self) -> Expr:
        return self._bool_chain("OR", self._xor)

    def _xor(self) -> Expr:
        return self._bool_chain("XOR", self._and)

    def _and(self) -> Expr:
        return self._bool_chain("AND", self._not)

    def _bool_chain(self, kw: str, sub) -> Expr:  # type: ignore[no-untyped-def]
        items = [sub()]
        while self.accept_kw(kw):
            items.append(sub())
        return items[0] if len(items) == 1 else BoolOp(kw, tuple(items))

    def _not(self) -> Expr:
        if self.accept_kw("NOT"):
            return Unary("NOT", self._not())
        return self._comparison()

    def _comparison(self) -> Expr:
        operands = [self._predicates()]
        ops: list[str] = []
        while self.at_op(*_COMPARE_OPS):
            op = str(self.advance().value)
            ops.append("<>" if op == "!=" else op)
            operands.append(self._predicates())
        return operands[0] if not ops else Compare(tuple(ops), tuple(operands))

    def _predicates(self) -> Expr:
        left = self._additive()
        while True:
            if self.at_kw("STARTS", "ENDS") and self.peek().upper == "WITH":
                op = str(self.advance().upper)
                self.advance()
                left = Binary(op, left, self._additive())
            elif self.accept_kw("CONTAINS"):
                left = Binary("CONTAINS", left, self._additive())
            elif self.accept_kw("IN"):
                left = Binary("IN", left, self._additive())
            elif self.accept_op("=~"):
                left = Binary("=~", left, self._additive())
            elif self.at_kw("IS"):
                self.advance()
                negated = self.accept_kw("NOT")
                if not self.accept_kw("NULL"):
                    if self.at_op(":") or self.at_kw("TYPED", "NORMALIZED") or self.at_name():
                        raise UnsupportedCypher("IS predicates other than IS [NOT] NULL")
                    raise self.error("NULL")
                left = IsNull(left, negated)
            else:
                return left

    def _additive(self) -> Expr:
        left = self._multiplicative()
        while self.at_op("+", "-"):
            op = str(self.advance().value)
            left = Binary(op, left, self._multiplicative())
        return left

    def _multiplicative(self) -> Expr:
        left = self._power()
        while self.at_op("*", "/", "%"):
            op = str(self.advance().value)
            left = Binary(op, left, self._power())
        return left

    def _power(self) -> Expr:
        left = self._unary()
        while self.accept_op("^"):
            left = Binary("^", left, self._unary())
        return left

    def _unary(self) -> Expr:
        if self.at_op("-", "+"):
            op = str(self.advance().value)
            operand = self._unary()
            if op == "-" and isinstance(operand, Literal) and type(operand.value) in (int, float):
                return Literal(-operand.value)
            return Unary(op, operand)
        return self._postfix()

    def _postfix(self) -> Expr:
        expr = self._atom()
        while True:
            if self.at_op(".") and self.at_name(self.peek()):
                self.advance()
                expr = Prop(expr, self.name())
            elif self.accept_op("["):
                expr = self._subscript(expr)
            elif self.at_op(":") and self.at_name(self.peek()):
                expr = HasLabels(expr, self.parse_label_expr(in_expr=True))
            elif self.at_op("{") and isinstance(expr, Var):
                expr = self._map_projection(expr)
            else:
                return expr

    def _subscript(self, subject: Expr) -> Expr:
        start = None if self.at_op("..") else self.parse_expr()
        if self.accept_op(".."):
            end = None if self.at_op("]") else self.parse_expr()
            self.expect_op("]")
            return Slice(subject, start, end)
        self.expect_op("]")
        assert start is not None
        return Index(subject, start)

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
            if self.tok.kind == "STRING":
                key = str(self.advance().value)
            else:
                key = self.name("a map key")
            self.expect_op(":")
            items.append((key, self.parse_expr()))
            if not self.accept_op(","):
                break
        self.expect_op("}")
        return MapLit(tuple(items))

    def _atom(self) -> Expr:
        tok = self.tok
        if tok.kind in ("INT", "FLOAT", "STRING"):
            self.advance()
            return Literal(tok.value)
        if tok.kind == "PARAM":
            return self.parse_param()
        if self.at_op("("):
            return self._paren_or_pattern()
        if self.at_op("["):
            return self._list()
        if self.at_op("{"):
            return self.parse_map_literal()
        if tok.kind == "QIDENT":
            self.advance()
            return Var(str(tok.value))
        if tok.kind != "IDENT":
            raise self.error("an expression")
        up = tok.upper
        if up in ("TRUE", "FALSE", "NULL"):
            self.advance()
            return Literal({"TRUE": True, "FALSE": False, "NULL": None}[up])
        if up == "CASE":
            return self._case()
        nxt = self.peek()
        if up in ("EXISTS", "COUNT") and self.at_op("{", tok=nxt):
            return self._subquery(up)
        if up in _CLAUSE_WORDS and not self.at_op("(", tok=nxt):
            raise self.error("an expression")
        if self.at_op("(", tok=nxt) or (self.at_op(".", tok=nxt) and self._dotted_call_ahead()):
            return self._call()
        self.advance()
        return Var(str(tok.value))

    def _dotted_call_ahead(self) -> bool:
        k = 1
        while self.at_op(".", tok=self.peek(k)) and self.at_name(self.peek(k + 1)):
            k += 2
        return k > 1 and self.at_op("(", tok=self.peek(k))

    def _paren_or_pattern(self) -> Expr:
        start = self.i
        pattern = self._try_pattern()
        if pattern is not None:
            if not self.bare_pattern_ok:
                raise UnsupportedCypher(
                    "pattern expressions outside WHERE (use EXISTS { ... } or COUNT { ... })"
                )
            return PatternExpr("exists", (pattern,), None)
        self.i = start
        self.expect_op("(")
        inner = self.parse_expr()
        self.expect_op(")")
        return inner

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
        if all(isinstance(e, Literal) for e in items):
            return Literal([e.value for e in items])  # type: ignore[attr-defined]
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
        self.accept_kw("MATCH")
        patterns = [self.parse_pattern_part()]
        while self.accept_op(","):
            patterns.append(self.parse_pattern_part())
        where = self._where_expr() if self.accept_kw("WHERE") else None
        if not self.at_op("}"):
            if self.at_name():
                raise UnsupportedCypher(f"{kind} {{ ... }} subqueries with clauses (only a pattern and WHERE)")
            raise self.error("'}'")
        self.advance()
        return PatternExpr("exists" if kind == "EXISTS" else "count", tuple(patterns), where)

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
