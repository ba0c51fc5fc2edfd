"""Token-stream helpers and graph-pattern parsing shared by the expression and clause parsers."""

from __future__ import annotations

from typing import Any

from kg.cypher.ast import Expr, LabelExpr, NodePattern, PathPattern, RelPattern
from kg.cypher.errors import CypherSyntaxError, UnsupportedCypher
from kg.cypher.lexer import Token, tokenize

_NAME_KINDS = ("IDENT", "QIDENT")


class TokenStream:
    """Cursor over the token list with keyword/operator matching and one-line error messages."""

    def __init__(self, text: str, toks: list[Token] | None = None) -> None:
        """``toks``: the tokens of ``text`` when the caller has them already (they are only read)."""
        self.text = text
        self.toks: list[Token] = tokenize(text) if toks is None else toks
        self.i = 0
        self.params: set[str] = set()
        # >0 while parsing WHERE or size(...): the only places a bare pattern means something we support.
        self.bare_pattern_ok = 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def at_kw(self, *kws: str) -> bool:
        return self.tok.upper in kws

    def at_op(self, *ops: str, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "OP" and t.value in ops

    def accept_kw(self, kw: str) -> bool:
        if self.tok.upper == kw:
            self.i += 1
            return True
        return False

    def accept_op(self, op: str) -> bool:
        if self.at_op(op):
            self.i += 1
            return True
        return False

    def expect_kw(self, kw: str) -> Token:
        if self.tok.upper != kw:
            raise self.error(kw)
        return self.advance()

    def expect_op(self, op: str) -> Token:
        if not self.at_op(op):
            raise self.error(f"'{op}'")
        return self.advance()

    def error(self, expected: str, tok: Token | None = None) -> CypherSyntaxError:
        t = tok or self.tok
        return CypherSyntaxError(
            f"line {t.line}, column {t.col}: expected {expected} but found {t.describe()}"
        )

    def at_name(self, tok: Token | None = None) -> bool:
        return (tok or self.tok).kind in _NAME_KINDS

    def name(self, what: str = "a name") -> str:
        if not self.at_name():
            raise self.error(what)
        return str(self.advance().value)

    def source_since(self, start_index: int) -> str:
        """Source text of the tokens consumed since `start_index` (used for column names)."""
        if self.i <= start_index:
            return ""
        return self.text[self.toks[start_index].pos : self.toks[self.i - 1].end]

    # Provided by the expression parser; declared here so pattern parsing can embed map literals.
    def parse_expr(self) -> Expr:
        raise NotImplementedError

    def parse_map_literal(self) -> Expr:
        raise NotImplementedError

    def parse_param(self) -> Expr:
        raise NotImplementedError

    def _clause(self) -> Any:  # provided by the clause parser, for EXISTS/COUNT { ... } subqueries
        raise NotImplementedError


class PatternParser(TokenStream):
    """Parses `(a:L {k: v})-[r:T*1..3]->(b)` chains, path variables and shortestPath()."""

    def at_rel_start(self) -> bool:
        if self.at_op("-"):
            return self.at_op("-", "[", tok=self.peek())
        return self.at_op("<") and self.at_op("-", tok=self.peek())

    def parse_pattern_part(self) -> PathPattern:
        var = None
        if self.at_name() and self.at_op("=", tok=self.peek()):
            var = self.name()
            self.advance()
        kw = self.tok.upper
        if kw in ("SHORTESTPATH", "ALLSHORTESTPATHS") and self.at_op("(", tok=self.peek()):
            self.advance()
            self.advance()
            nodes, rels = self.parse_chain()
            self.expect_op(")")
            if len(rels) != 1:
                raise UnsupportedCypher(f"{kw.lower()} over more than one relationship pattern")
            return PathPattern(var, nodes, rels, "shortest" if kw == "SHORTESTPATH" else "all")
        nodes, rels = self.parse_chain()
        return PathPattern(var, nodes, rels)

    def parse_chain(self) -> tuple[tuple[NodePattern, ...], tuple[RelPattern, ...]]:
        nodes = [self.parse_node()]
        rels: list[RelPattern] = []
        while self.at_rel_start():
            rels.append(self.parse_rel())
            nodes.append(self.parse_node())
        return tuple(nodes), tuple(rels)

    def parse_properties(self) -> Expr | None:
        if self.at_op("{"):
            return self.parse_map_literal()
        if self.tok.kind == "PARAM":
            return self.parse_param()
        return None

    def parse_node(self) -> NodePattern:
        self.expect_op("(")
        if self.at_op("("):
            raise UnsupportedCypher("quantified path patterns ((...){m,n})")
        var = self.name() if self.at_name() else None
        labels = self.parse_label_expr(in_expr=False) if self.at_op(":") else ()
        props = self.parse_properties()
        if self.at_kw("WHERE"):
            raise UnsupportedCypher("WHERE inside a node pattern (move it to the MATCH's WHERE)")
        self.expect_op(")")
        return NodePattern(var, labels, props)

    def parse_label_expr(self, in_expr: bool) -> LabelExpr:
        """`:A:B` / `:A&B` (all of) or `:A|B` (any of); mixing both is not supported."""
        self.expect_op(":")
        if self.at_op("!", "%", "("):
            raise UnsupportedCypher("label expressions with '!', '%' or parentheses")
        groups: list[list[str]] = [[self.name("a label")]]
        mode = ""
        while True:
            if self.at_op(":", "&") and self.at_name(self.peek()):
                if mode == "|":
                    raise UnsupportedCypher("label expressions mixing '|' with ':' or '&'")
                mode = ":"
                self.advance()
                groups.append([self.name("a label")])
            elif self.at_op("|") and self._label_follows_bar(in_expr):
                if mode == ":":
                    raise UnsupportedCypher("label expressions mixing '|' with ':' or '&'")
                mode = "|"
                self.advance()
                self.accept_op(":")
                groups[-1].append(self.name("a label"))
            elif self.at_op("!", "%") or (self.at_op("(") and not in_expr):
                raise UnsupportedCypher("label expressions with '!', '%' or parentheses")
            else:
                return tuple(tuple(g) for g in groups)

    def _label_follows_bar(self, in_expr: bool) -> bool:
        nxt = self.peek()
        if self.at_op(":", tok=nxt):
            return True
        if not self.at_name(nxt):
            return False
        # In `[x IN xs WHERE x:A | x.name]` the '|' starts the projection, not another label.
        return not in_expr or not self.at_op(".", "(", "[", "{", tok=self.peek(2))

    def parse_rel(self) -> RelPattern:
        left = self.accept_op("<")
        self.expect_op("-")
        var: str | None = None
        types: list[str] = []
        props: Expr | None = None
        varlen, lo = False, 1
        hi: int | None = 1
        if self.accept_op("["):
            if self.at_name():
                var = self.name()
            if self.accept_op(":"):
                types.append(self.name("a relationship type"))
                while self.accept_op("|"):
                    self.accept_op(":")
                    types.append(self.name("a relationship type"))
                if self.at_op("&", "!", "%", "("):
                    raise UnsupportedCypher("relationship type expressions other than ':A|B'")
            if self.accept_op("*"):
                varlen = True
                lo, hi = self._parse_hops()
            props = self.parse_properties()
            if self.at_kw("WHERE"):
                raise UnsupportedCypher("WHERE inside a relationship pattern")
            self.expect_op("]")
        self.expect_op("-")
        right = self.accept_op(">")
        direction = "both" if left == right else ("in" if left else "out")
        return RelPattern(var, tuple(types), props, direction, varlen, lo, hi)

    def _parse_hops(self) -> tuple[int, int | None]:
        if self.tok.kind == "INT":
            lo = int(self.advance().value)
            if not self.accept_op(".."):
                return lo, lo  # `*2` means exactly two hops
            hi = int(self.advance().value) if self.tok.kind == "INT" else None
            return lo, hi
        if self.accept_op(".."):
            hi = int(self.advance().value) if self.tok.kind == "INT" else None
            return 1, hi
        return 1, None
