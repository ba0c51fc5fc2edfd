"""Static checks of a whole parsed query, before anything runs: variable kinds, scope, value types."""

from __future__ import annotations

from kg.cypher import ast as A
from kg.cypher.analysis import aggregates_in, check_functions, children, free_vars, is_aggregate, substitute, walk
from kg.cypher.errors import CypherSyntaxError, CypherTypeError
from kg.cypher.values import type_name

# Static types are the names `type_name` gives values; None means "not known before running".
Env = dict[str, str | None]
NODE, REL, PATH, LIST, MAP, BOOL, NULL = "Node", "Relationship", "Path", "List", "Map", "Boolean", "Null"
_NUMBERS = ("Integer", "Float")
_BOOLEAN_RESULT = (A.Compare, A.IsNull, A.HasLabels, A.Quantifier)
# Functions whose argument must be one kind of value: name -> (static types accepted, the message's words).
_ARG_TYPES: dict[str, tuple[tuple[str, ...], str]] = {
    "type": ((REL,), "a relationship"),
    "length": ((PATH, LIST, "String"), "a path"),
    "size": ((LIST, "String"), "a list or string"),
    "properties": ((NODE, REL, MAP), "a node, relationship or map"),
    "labels": ((NODE,), "a node"),
    "nodes": ((PATH,), "a path"), "relationships": ((PATH,), "a path"),
    "startnode": ((REL,), "a relationship"), "endnode": ((REL,), "a relationship"),
}
_RESULT_TYPES = {
    "size": "Integer", "length": "Integer", "count": "Integer", "tostring": "String", "type": "String",
    "labels": LIST, "keys": LIST, "nodes": LIST, "relationships": LIST, "collect": LIST, "range": LIST,
    "properties": MAP, "startnode": NODE, "endnode": NODE, "tointeger": "Integer", "tofloat": "Float",
}


def _fail(msg: str) -> CypherSyntaxError:
    return CypherSyntaxError(msg)


def static_type(e: A.Expr, env: Env) -> str | None:
    """The type `e` is known to have before running, or None."""
    if isinstance(e, A.Literal):
        return type_name(e.value)
    if isinstance(e, A.Var):
        return env.get(e.name)
    if isinstance(e, (A.ListLit, A.ListComp, A.PatternComp)):
        return LIST
    if isinstance(e, (A.MapLit, A.MapProj)):
        return MAP
    if isinstance(e, _BOOLEAN_RESULT) or (isinstance(e, A.Unary) and e.op == "NOT") or isinstance(e, A.BoolOp):
        return BOOL
    if isinstance(e, A.Binary) and e.op in ("STARTS", "ENDS", "CONTAINS", "IN", "=~"):
        return BOOL
    if isinstance(e, A.PatternExpr):
        return BOOL if e.kind == "exists" else "Integer"
    if isinstance(e, A.FuncCall):
        return _RESULT_TYPES.get(e.name)
    return None


def check_grouping(expr: A.Expr, keys: list[A.Expr], key_vars: set[str], scope: set[str],
                    local: frozenset[str] = frozenset()) -> None:
    """Non-aggregated parts of an aggregating item may only use grouping keys (as in Neo4j): variables and
    property reads that are keys; a compound key such as `a.x + b.x` is ambiguous inside the item."""
    if is_aggregate(expr) or (_simple(expr) and any(expr == k for k in keys)):
        return
    if isinstance(expr, A.Var):
        if expr.name not in local:
            raise CypherSyntaxError(
                f"`{expr.name}` is used next to an aggregate but is not a grouping key; "
                "add it as its own RETURN/WITH item"
            )
        return
    if isinstance(expr, (A.PatternExpr, A.PatternComp)):
        bad = (free_vars(expr) & scope) - key_vars - local
        if bad:
            raise CypherSyntaxError(f"`{sorted(bad)[0]}` is used next to an aggregate but is not a grouping key")
        return
    if isinstance(expr, (A.ListComp, A.Quantifier, A.Reduce)):
        local = local | {expr.var} | ({expr.acc} if isinstance(expr, A.Reduce) else set())
    for child in children(expr):
        check_grouping(child, keys, key_vars, scope, local)


def _simple(expr: A.Expr) -> bool:
    while isinstance(expr, A.Prop):
        expr = expr.subject
    return isinstance(expr, A.Var)


def _element_type(source: A.Expr) -> str | None:
    """The type every element of a literal list has, if they share one (nulls aside)."""
    if not isinstance(source, A.Literal) or not isinstance(source.value, list):
        return None
    kinds = {type_name(v) for v in source.value if v is not None}
    return kinds.pop() if len(kinds) == 1 else None


def _want(e: A.Expr, env: Env, accepted: tuple[str, ...], what: str) -> None:
    t = static_type(e, env)
    if t is not None and t != NULL and t not in accepted:
        raise _fail(f"{what}, got {t}")


class _Checker:
    """Walks the clauses of one single query, tracking which variables exist and what they hold."""

    def __init__(self) -> None:
        self.env: Env = {}

    def single(self, query: A.SingleQuery) -> None:
        for clause in query.clauses:
            if isinstance(clause, A.Match):
                self.match(clause)
            elif isinstance(clause, A.Unwind):
                self.top(clause.expr, self.env)
                if clause.var in self.env:
                    raise _fail(f"variable `{clause.var}` is already defined")
                self.env[clause.var] = None
            elif isinstance(clause, A.With):
                self.projection(clause.proj, clause.where)
            elif isinstance(clause, A.Return):
                self.projection(clause.proj, None)
            elif isinstance(clause, A.Call):
                for _, alias in clause.yields or ():
                    self.env[alias] = "String"
                if clause.where is not None:
                    self.predicate(clause.where, self.env, "WHERE")

    def patterns(self, patterns: tuple[A.PathPattern, ...], env: Env) -> Env:
        """Kinds of the variables `patterns` bind, checked against `env`; returns the new ones."""
        new: Env = {}

        def bind(name: str, kind: str) -> None:
            before = new[name] if name in new else env.get(name, "")
            if before == "":
                new[name] = kind
            elif before == kind == REL and name in new:
                raise _fail(f"relationship variable `{name}` is used twice in one pattern")
            elif before not in (None, NULL, kind):
                raise _fail(f"variable `{name}` is a {before}, it cannot be used as a {kind} here")
            else:
                new.setdefault(name, kind)

        for p in patterns:
            if p.var is not None:
                if p.var in env or p.var in new:
                    raise _fail(f"variable `{p.var}` is already defined; a path variable must be new")
                new[p.var] = PATH
            for n in p.nodes:
                if n.var is not None:
                    bind(n.var, NODE)
            for r in p.rels:
                if r.var is not None:
                    bind(r.var, LIST if r.varlen else REL)
        inner = {**env, **new}
        for p in patterns:
            for part in p.parts:
                if part.props is not None:
                    self.top(part.props, inner)
        return {k: v for k, v in new.items() if k not in env}

    def match(self, clause: A.Match) -> None:
        self.env.update(self.patterns(clause.patterns, self.env))
        if clause.where is not None:
            self.predicate(clause.where, self.env, "WHERE")

    def top(self, e: A.Expr, env: Env) -> None:
        """Checks of an expression that a clause holds (not one nested in another expression)."""
        check_functions(e)
        self.expr(e, env)

    def predicate(self, e: A.Expr, env: Env, what: str) -> None:
        self.top(e, env)
        _want(e, env, (BOOL,), f"{what} expects a boolean")
        if aggregates_in(e):
            raise _fail(f"aggregate functions are not allowed in {what} (aggregate in WITH first)")

    def projection(self, proj: A.Projection, where: A.Expr | None) -> None:
        before = self.env
        after: Env = dict(before) if proj.star else {}
        aggs = []
        for it in proj.items:
            self.top(it.expr, before)
            aggs.append(aggregates_in(it.expr))
            after[it.alias] = static_type(it.expr, before)
        aggregating = any(aggs)
        if aggregating:
            keys = [it.expr for it, a in zip(proj.items, aggs, strict=True) if not a]
            key_vars = {e.name for e in keys if isinstance(e, A.Var)}
            for it, a in zip(proj.items, aggs, strict=True):
                if a:
                    check_grouping(it.expr, keys, key_vars, set(before))
            keys += [A.Var(it.alias) for it in proj.items]
            for e, _ in proj.order:
                if aggregates_in(e):
                    check_grouping(e, keys, key_vars | {it.alias for it in proj.items}, set(before))
        for what, n in (("SKIP", proj.skip), ("LIMIT", proj.limit)):
            if isinstance(n, A.Literal) and (type(n.value) is not int or n.value < 0):
                raise _fail(f"{what} expects a non-negative integer, got {type_name(n.value)} {n.value!r}")
        # ORDER BY and WITH's WHERE also see the variables from before the projection, unless it aggregates.
        visible = after if aggregating else {**before, **after}
        mapping = [(it.expr, A.Var(it.alias)) for it in proj.items]
        for key, _ in proj.order:
            e = substitute(key, mapping)
            if aggregating or proj.distinct:
                self.top(e, {**before, **after})  # a truly undefined name gets its own message first
                if free_vars(e) & (set(before) - set(after)):
                    raise _fail("after DISTINCT or aggregation, ORDER BY can only use the returned columns")
            else:
                self.top(e, visible)
        if where is not None:
            self.predicate(where, visible, "WHERE")
        self.env = after

    def expr(self, e: A.Expr, env: Env) -> None:
        """Scope and type checks of one expression; raises CypherSyntaxError (CypherTypeError for a
        property read on a value that can never have properties)."""
        if isinstance(e, A.Var):
            if e.name not in env:
                raise _fail(f"variable `{e.name}` is not defined")
            return
        if isinstance(e, A.MapProj):
            for kind, key, _ in e.items:
                if kind == "var" and key not in env:
                    raise _fail(f"variable `{key}` is not defined")
        elif isinstance(e, (A.ListComp, A.Quantifier, A.Reduce)):
            self._local(e, env)
            return
        elif isinstance(e, A.PatternExpr):
            self._pattern_expr(e, env)
            return
        elif isinstance(e, A.Subquery):
            checker = _Checker()
            checker.env = dict(env)
            checker.single(e.query)
            return
        elif isinstance(e, A.PatternComp):
            inner = {**env, **self.patterns((e.pattern,), env)}
            for part in (e.where, e.proj):
                if part is not None:
                    self.expr(part, inner)
            return
        elif isinstance(e, A.Prop):
            t = static_type(e.subject, env)
            if t == PATH:
                raise _fail(f"cannot read property `{e.key}` of a {t}")
            if t in (*_NUMBERS, "String", BOOL, LIST):
                raise CypherTypeError(f"cannot read property `{e.key}` of a {t}")
        elif isinstance(e, A.Unary) and e.op == "NOT":
            _want(e.operand, env, (BOOL,), "NOT expects a boolean")
        elif isinstance(e, A.BoolOp):
            for x in e.operands:
                _want(x, env, (BOOL,), f"{e.op} expects booleans")
        elif isinstance(e, A.Binary) and e.op in ("-", "*", "/", "%", "^"):
            for x in (e.left, e.right):
                _want(x, env, _NUMBERS, f"{e.op} expects numbers")
        elif isinstance(e, A.Binary) and e.op == "IN":
            _want(e.right, env, (LIST,), "IN expects a list on its right")
        elif isinstance(e, A.FuncCall):
            self._call(e, env)
        for child in children(e):
            self.expr(child, env)

    def _call(self, e: A.FuncCall, env: Env) -> None:
        if e.name in _ARG_TYPES and e.args:
            accepted, words = _ARG_TYPES[e.name]
            _want(e.args[0], env, accepted, f"{e.name}() expects {words}")
        if is_aggregate(e):
            for arg in e.args:
                if any(isinstance(x, A.FuncCall) and x.name == "rand" for x in walk(arg)):
                    raise _fail(f"{e.name}() of a non-constant expression such as rand()")

    def _local(self, e: A.ListComp | A.Quantifier | A.Reduce, env: Env) -> None:
        self.expr(e.source, env)
        inner = {**env, e.var: _element_type(e.source)}
        parts: list[A.Expr | None]
        if isinstance(e, A.Reduce):
            self.expr(e.init, env)
            inner[e.acc] = None
            parts = [e.expr]
        else:
            parts = [e.where, e.proj if isinstance(e, A.ListComp) else None]
        for part in parts:
            if part is None:
                continue
            if aggregates_in(part):
                raise _fail("aggregate functions are not allowed inside list comprehensions, quantifiers or reduce")
            self.expr(part, inner)

    def _pattern_expr(self, e: A.PatternExpr, env: Env) -> None:
        new = self.patterns(e.patterns, env)
        if not e.subquery and new:
            # A pattern used as an expression only tests variables that exist; it cannot introduce one.
            name = next(iter(new))
            raise _fail(f"variable `{name}` is not defined (a pattern expression cannot introduce variables)")
        if e.where is not None:
            self.predicate(e.where, {**env, **new}, "WHERE")


def check_query(query: A.Query) -> None:
    """Raise CypherSyntaxError (or CypherTypeError) if `query` is invalid before looking at any data."""
    for part in query.parts:
        _Checker().single(part)
