"""Recursive-descent parser for Cypher expressions, following openCypher operator precedence."""

from __future__ import annotations

from collections.abc import Callable

from kg.cypher.ast import (
    Binary,
    BoolOp,
    Compare,
    Expr,
    HasLabels,
    Index,
    IsNull,
    Literal,
    PatternExpr,
    Prop,
    Slice,
    Unary,
    Var,
)
from kg.cypher.errors import CypherSyntaxError, UnsupportedCypher
from kg.cypher.lexer import INT_MAX
from kg.cypher.parser_atoms import AtomParser

_COMPARE_OPS = ("=", "<>", "!=", "<", ">", "<=", ">=")
# Words that start a clause can never be a variable, so a dangling operator gets a clear error.
_CLAUSE_WORDS = {
    "MATCH", "OPTIONAL", "RETURN", "WITH", "WHERE", "UNWIND", "UNION", "CREATE", "MERGE", "SET",
    "DELETE", "DETACH", "REMOVE", "CALL", "AS", "THEN", "ELSE", "WHEN", "AND", "OR", "XOR",
    "FOREACH", "LOAD",
}


class ExprParser(AtomParser):
    """Expression grammar; `parse_expr` is the entry point."""
    def parse_expr(self) -> Expr:
        return self._or()

    def _or(self) -> Expr:
        return self._bool_chain("OR", self._xor)

    def _xor(self) -> Expr:
        return self._bool_chain("XOR", self._and)

    def _and(self) -> Expr:
        return self._bool_chain("AND", self._not)

    def _bool_chain(self, kw: str, sub: Callable[[], Expr]) -> Expr:
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
            if op == "-" and self.tok.kind == "INT" and self.tok.value == INT_MAX + 1:
                self.advance()  # -9223372036854775808: the one literal whose magnitude needs the minus
                return Literal(-INT_MAX - 1)
            operand = self._unary()
            if (op == "-" and isinstance(operand, Literal) and type(operand.value) in (int, float)
                    and operand.value != -INT_MAX - 1):  # -(-2**63) overflows: left to run time
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

    def _atom(self) -> Expr:
        tok = self.tok
        if tok.kind in ("INT", "FLOAT", "STRING"):
            if tok.kind == "INT" and int(tok.value) > INT_MAX:
                raise CypherSyntaxError(
                    f"line {tok.line}, column {tok.col}: integer literal too large for 64 bits ({tok.value})")
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
                raise CypherSyntaxError(
                    "pattern expressions are allowed only in WHERE and size() (use EXISTS { ... } or COUNT { ... })"
                )
            return PatternExpr("exists", (pattern,), None)
        self.i = start
        self.expect_op("(")
        inner = self.parse_expr()
        self.expect_op(")")
        return inner
