"""Immutable syntax-tree node types produced by the parser and consumed by the evaluator."""

from __future__ import annotations

from dataclasses import Field, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

# A label expression in conjunctive form: every inner tuple must contain one of the node's labels.
# `:A:B` -> (("A",), ("B",));  `:A|B` -> (("A", "B"),)
LabelExpr = tuple[tuple[str, ...], ...]


class Expr:
    """Base of every expression node; subclasses are frozen so equal trees compare equal."""

    __slots__ = ()
    if TYPE_CHECKING:  # every node is a dataclass, so dataclasses.fields() and replace() take any Expr
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    value: Any


@dataclass(frozen=True, slots=True)
class Param(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Var(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Prop(Expr):
    subject: Expr
    key: str


@dataclass(frozen=True, slots=True)
class Index(Expr):
    subject: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    subject: Expr
    start: Expr | None
    end: Expr | None


@dataclass(frozen=True, slots=True)
class ListLit(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class MapLit(Expr):
    items: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class MapProj(Expr):
    """`n {.a, .*, k: expr, v}`; item kinds are 'prop', 'all', 'kv', 'var'."""

    subject: Expr
    items: tuple[tuple[str, str, Expr | None], ...]


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str  # '-', '+', 'NOT'
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    op: str  # + - * / % ^ STARTS ENDS CONTAINS IN =~
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """A comparison chain `a < b <= c`, meaning `a < b AND b <= c`."""

    ops: tuple[str, ...]
    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    op: str  # AND, OR, XOR
    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class IsNull(Expr):
    operand: Expr
    negated: bool


@dataclass(frozen=True, slots=True)
class HasLabels(Expr):
    subject: Expr
    labels: LabelExpr


@dataclass(frozen=True, slots=True)
class FuncCall(Expr):
    name: str  # lower-cased, dotted for namespaced functions
    args: tuple[Expr, ...]
    distinct: bool = False
    star: bool = False


@dataclass(frozen=True, slots=True)
class Case(Expr):
    subject: Expr | None
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None


@dataclass(frozen=True, slots=True)
class ListComp(Expr):
    var: str
    source: Expr
    where: Expr | None
    proj: Expr | None


@dataclass(frozen=True, slots=True)
class Quantifier(Expr):
    kind: str  # all, any, none, single
    var: str
    source: Expr
    where: Expr


@dataclass(frozen=True, slots=True)
class Reduce(Expr):
    acc: str
    init: Expr
    var: str
    source: Expr
    expr: Expr


@dataclass(frozen=True, slots=True)
class NodePattern:
    var: str | None
    labels: LabelExpr
    props: Expr | None  # MapLit or Param


@dataclass(frozen=True, slots=True)
class RelPattern:
    var: str | None
    types: tuple[str, ...]  # alternatives; empty means any type
    props: Expr | None
    direction: str  # 'out' (a)-->(b), 'in' (a)<--(b), 'both' (a)--(b)
    varlen: bool = False
    min_hops: int = 1
    max_hops: int | None = 1  # None: unbounded (capped by the matcher)


@dataclass(frozen=True, slots=True)
class PathPattern:
    var: str | None
    nodes: tuple[NodePattern, ...]
    rels: tuple[RelPattern, ...]
    shortest: str = ""  # '', 'shortest' or 'all'

    @property
    def parts(self) -> tuple[NodePattern | RelPattern, ...]:
        """The node patterns, then the relationship patterns."""
        return (*self.nodes, *self.rels)


@dataclass(frozen=True, slots=True)
class PatternExpr(Expr):
    """EXISTS { ... } / bare pattern predicate ('exists'), COUNT { ... } and size(pattern) ('count')."""

    kind: str
    patterns: tuple[PathPattern, ...]
    where: Expr | None
    subquery: bool = False  # EXISTS/COUNT { ... } may introduce variables; a bare pattern may not


@dataclass(frozen=True, slots=True)
class Subquery(Expr):
    """EXISTS { MATCH ... [WITH ...] [RETURN ...] } ('exists') or COUNT { ... } ('count') with clauses."""

    kind: str
    query: SingleQuery


@dataclass(frozen=True, slots=True)
class PatternComp(Expr):
    pattern: PathPattern
    where: Expr | None
    proj: Expr


@dataclass(frozen=True, slots=True)
class ReturnItem:
    expr: Expr
    alias: str
    explicit: bool  # False when the column name is the expression's source text


@dataclass(frozen=True, slots=True)
class Projection:
    distinct: bool
    star: bool
    items: tuple[ReturnItem, ...]
    order: tuple[tuple[Expr, bool], ...]  # (expr, descending)
    skip: Expr | None
    limit: Expr | None


@dataclass(frozen=True, slots=True)
class Match:
    patterns: tuple[PathPattern, ...]
    where: Expr | None
    optional: bool


@dataclass(frozen=True, slots=True)
class Unwind:
    expr: Expr
    var: str


@dataclass(frozen=True, slots=True)
class With:
    proj: Projection
    where: Expr | None


@dataclass(frozen=True, slots=True)
class Return:
    proj: Projection


@dataclass(frozen=True, slots=True)
class Call:
    """A whitelisted read-only procedure call such as `CALL db.labels() YIELD label`."""

    procedure: str
    yields: tuple[tuple[str, str], ...] | None  # (column, alias); None: all columns
    where: Expr | None


Clause = Match | Unwind | With | Return | Call


@dataclass(frozen=True, slots=True)
class SingleQuery:
    clauses: tuple[Clause, ...]


@dataclass(frozen=True, slots=True)
class Query:
    parts: tuple[SingleQuery, ...]
    union_all: bool
    params: frozenset[str]
