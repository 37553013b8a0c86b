"""The checkpoint predicate language: tokenizer, parser, AST, substitution.

A checkpoint predicate is a small expression over simulator state, e.g.::

    and(was_open($drawer), closed($drawer))
    on($target, plate_1) and not any_on($others, plate_1)
    pour_count(tomato_sauce_1, bowl_1) >= 2

Grammar (``not`` binds tighter than ``and``, which binds tighter than ``or``;
binary operators are left-associative; a comparison joins two terms)::

    expr    := and_ ("or" and_)*
    and_    := not_ ("and" not_)*
    not_    := "not" not_ | compare
    compare := term (("<" | "<=" | ">" | ">=" | "==" | "!=") term)?
    term    := NUMBER | "-" NUMBER | REF | NAME | NAME "(" args ")"
             | "[" args "]" | "(" expr ")"
    args    := (expr ("," expr)*)?
    REF     := "$" NAME ("." NAME)?

``and(a, b, ...)`` and ``or(a, b, ...)`` (two or more arguments) are the call
forms of the infix operators; ``not(x)`` is ``not`` applied to ``(x)``.
``and``, ``or`` and ``not`` are reserved and cannot be names.

This module knows nothing about which functions exist; that is the
catalogue's job (:func:`memobench.core.predicates.check`). Predicates are
never built with ``eval``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

__all__ = [
    "And",
    "Call",
    "Compare",
    "Expr",
    "ExprError",
    "ListLit",
    "Name",
    "Not",
    "Num",
    "Or",
    "Ref",
    "children",
    "parse",
    "refs",
    "rewrite",
    "substitute",
    "walk",
]

KEYWORDS = frozenset({"and", "or", "not"})
COMPARE_OPS = ("<=", ">=", "==", "!=", "<", ">")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class ExprError(ValueError):
    """A predicate expression is malformed, unbound, or not well-typed.

    ``position`` is the 0-based character offset of the problem in the
    source text when it is known (parse errors), else ``None``.
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


def _check_ident(kind: str, value: str) -> None:
    # Nodes validate their names so that str(node) always re-parses.
    if not isinstance(value, str) or not _IDENT_RE.match(value) or value in KEYWORDS:
        raise ExprError(f"{kind} {value!r} is not a valid name (letters, digits, '_'; not a keyword)")


# --------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Num:
    """A number literal (always stored as float)."""

    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))
        if not math.isfinite(self.value):
            raise ExprError(f"number {self.value} is not finite")

    def __str__(self) -> str:
        v = self.value
        return str(int(v)) if v.is_integer() else repr(v)


@dataclass(frozen=True)
class Name:
    """A bare identifier: an object, fixture or region name."""

    name: str

    def __post_init__(self) -> None:
        _check_ident("name", self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Ref:
    """A binding reference ``$name`` or ``$name.key``."""

    name: str
    key: str | None = None

    def __post_init__(self) -> None:
        _check_ident("binding", self.name)
        if self.key is not None:
            _check_ident("binding key", self.key)

    def __str__(self) -> str:
        return f"${self.name}" if self.key is None else f"${self.name}.{self.key}"


@dataclass(frozen=True)
class ListLit:
    """A list literal ``[a, b, $c]``."""

    items: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"


@dataclass(frozen=True)
class Call:
    """A function call ``func(arg, ...)`` (not and/or/not, which have their own nodes)."""

    func: str
    args: tuple

    def __post_init__(self) -> None:
        _check_ident("function", self.func)
        object.__setattr__(self, "args", tuple(self.args))

    def __str__(self) -> str:
        return f"{self.func}(" + ", ".join(str(a) for a in self.args) + ")"


@dataclass(frozen=True)
class Not:
    operand: Expr

    def __str__(self) -> str:
        return "not " + _wrap(self.operand, (And, Or))


@dataclass(frozen=True)
class And:
    operands: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", tuple(self.operands))
        if len(self.operands) < 2:
            raise ExprError(f"and needs at least 2 operands, got {len(self.operands)}")

    def __str__(self) -> str:
        # Nested and/or keep their parentheses so the tree shape round-trips.
        return " and ".join(_wrap(o, (And, Or)) for o in self.operands)


@dataclass(frozen=True)
class Or:
    operands: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", tuple(self.operands))
        if len(self.operands) < 2:
            raise ExprError(f"or needs at least 2 operands, got {len(self.operands)}")

    def __str__(self) -> str:
        return " or ".join(_wrap(o, (Or,)) for o in self.operands)


@dataclass(frozen=True)
class Compare:
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in COMPARE_OPS:
            raise ExprError(f"unknown comparison {self.op!r}; valid: {', '.join(COMPARE_OPS)}")

    def __str__(self) -> str:
        inner = (And, Or, Not, Compare)
        return f"{_wrap(self.left, inner)} {self.op} {_wrap(self.right, inner)}"


Expr = Num | Name | Ref | ListLit | Call | Not | And | Or | Compare


def _wrap(node: Expr, kinds: tuple[type, ...]) -> str:
    return f"({node})" if isinstance(node, kinds) else str(node)


# ---------------------------------------------------------------- traversal


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``expr``, in source order."""
    if isinstance(expr, ListLit):
        return expr.items
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Not):
        return (expr.operand,)
    if isinstance(expr, And | Or):
        return expr.operands
    if isinstance(expr, Compare):
        return (expr.left, expr.right)
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of ``expr``, pre-order."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def rewrite(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild ``expr`` top-down: where ``fn(node)`` returns a node it replaces
    ``node`` (and is not descended into); where it returns None the node is
    kept and its children are rewritten."""
    replaced = fn(expr)
    if replaced is not None:
        return replaced
    kids = children(expr)
    if not kids:
        return expr
    new = tuple(rewrite(k, fn) for k in kids)
    if isinstance(expr, Not):
        return Not(new[0])
    if isinstance(expr, Compare):
        return Compare(expr.op, new[0], new[1])
    if isinstance(expr, ListLit):
        return ListLit(new)
    if isinstance(expr, Call):
        return Call(expr.func, new)
    return And(new) if isinstance(expr, And) else Or(new)


def refs(expr: Expr) -> set[str]:
    """The binding names (without ``$`` or key) that ``expr`` references."""
    return {node.name for node in walk(expr) if isinstance(node, Ref)}


def substitute(expr: Expr, binding: Mapping[str, object]) -> Expr:
    """Replace every ``$name`` / ``$name.key`` by the bound value.

    A value may be a str (becomes a :class:`Name`), a list/tuple of str
    (a :class:`ListLit` of names), a number (a :class:`Num`), or, for
    ``$name.key``, a mapping whose ``key`` entry is one of these.
    Raises :class:`ExprError` for an unbound name, a missing key, or a value
    of another type; the message lists what is available.
    """

    def fn(node: Expr) -> Expr | None:
        if not isinstance(node, Ref):
            return None
        if node.name not in binding:
            avail = ", ".join(f"${k}" for k in sorted(binding)) or "none"
            raise ExprError(f"unbound reference {node} (bound: {avail})")
        value = binding[node.name]
        if node.key is not None:
            if not isinstance(value, Mapping):
                raise ExprError(f"{node}: ${node.name} is {value!r}, not a mapping with keys")
            if node.key not in value:
                avail = ", ".join(sorted(map(str, value))) or "none"
                raise ExprError(f"{node}: ${node.name} has no key {node.key!r} (keys: {avail})")
            value = value[node.key]
        return _value_to_expr(str(node), value)

    return rewrite(expr, fn)


def _value_to_expr(where: str, value: object) -> Expr:
    try:
        if isinstance(value, str):
            return Name(value)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return ListLit(tuple(Name(v) for v in value))
        if isinstance(value, int | float) and not isinstance(value, bool):
            return Num(value)
    except ExprError as err:
        raise ExprError(f"{where}: {err}") from None
    raise ExprError(f"{where}: cannot substitute {value!r} (need a name, a list of names or a number)")


# --------------------------------------------------------------------- parser

_TOKEN_RE = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<ref>\$[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><=|>=|==|!=|<|>)"
    r"|(?P<punct>[()\[\],-])"
)


@dataclass(frozen=True)
class _Token:
    kind: str  # num, ref, ident, op, punct, end
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            what = "a binding name after '$'" if text[pos] == "$" else "a token"
            raise _located(f"unexpected character {text[pos]!r}", text, pos, f" (expected {what})")
        if m.lastgroup != "ws":
            tokens.append(_Token(m.lastgroup or "", m.group(), pos))
        pos = m.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


def _located(problem: str, text: str, pos: int, hint: str = "") -> ExprError:
    return ExprError(f'{problem} at column {pos + 1} in "{text}"{hint}', position=pos)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def at(self, *texts: str) -> bool:
        tok = self.peek()
        return tok.kind in ("ident", "op", "punct") and tok.text in texts

    def fail(self, tok: _Token, expected: str) -> ExprError:
        what = "end of input" if tok.kind == "end" else repr(tok.text)
        return _located(f"unexpected {what}", self.text, tok.pos, f" (expected {expected})")

    def expect(self, text: str) -> _Token:
        if not self.at(text):
            raise self.fail(self.peek(), repr(text))
        return self.take()

    def parse(self) -> Expr:
        expr = self.or_()
        if self.peek().kind != "end":
            raise self.fail(self.peek(), "'and', 'or' or end of input")
        return expr

    def or_(self) -> Expr:
        ops = [self.and_()]
        while self.at("or"):
            self.take()
            ops.append(self.and_())
        return ops[0] if len(ops) == 1 else Or(tuple(ops))

    def and_(self) -> Expr:
        ops = [self.not_()]
        while self.at("and"):
            self.take()
            ops.append(self.not_())
        return ops[0] if len(ops) == 1 else And(tuple(ops))

    def not_(self) -> Expr:
        if self.at("not"):
            self.take()
            return Not(self.not_())
        left = self.term()
        if self.peek().kind == "op":
            op = self.take().text
            cmp = Compare(op, left, self.term())
            if self.peek().kind == "op":
                raise self.fail(self.peek(), "no second comparison; chain with 'and'")
            return cmp
        return left

    def term(self) -> Expr:
        tok = self.peek()
        if tok.kind == "num":
            return Num(float(self.take().text))
        if tok.kind == "punct" and tok.text == "-" and self.peek(1).kind == "num":
            self.take()
            return Num(-float(self.take().text))
        if tok.kind == "ref":
            name, _, key = self.take().text[1:].partition(".")
            try:
                return Ref(name, key or None)
            except ExprError as err:  # e.g. $and: a keyword is not a binding name
                raise _located(str(err), self.text, tok.pos) from None
        if self.at("["):
            self.take()
            return ListLit(tuple(self.args("]")))
        if self.at("("):
            self.take()
            inner = self.or_()
            self.expect(")")
            return inner
        if tok.kind == "ident" and tok.text != "not":
            return self.name_or_call()
        raise self.fail(tok, "an expression")

    def name_or_call(self) -> Expr:
        tok = self.take()
        if tok.text in ("and", "or"):
            if not self.at("("):
                raise self.fail(tok, "an expression")
            self.take()
            args = self.args(")")
            if len(args) < 2:
                raise _located(f"{tok.text}() needs at least 2 arguments, got {len(args)}", self.text, tok.pos)
            return And(tuple(args)) if tok.text == "and" else Or(tuple(args))
        if self.at("("):
            self.take()
            return Call(tok.text, tuple(self.args(")")))
        return Name(tok.text)

    def args(self, close: str) -> list[Expr]:
        items: list[Expr] = []
        if self.at(close):
            self.take()
            return items
        items.append(self.or_())
        while self.at(","):
            self.take()
            items.append(self.or_())
        if not self.at(close):
            raise self.fail(self.peek(), f"',' or {close!r}")
        self.take()
        return items


def parse(text: str) -> Expr:
    """Parse predicate source text into an :data:`Expr`.

    Raises :class:`ExprError` naming the problem and its 1-based column,
    e.g. ``unexpected ')' at column 13 in "and(open(x),))" (expected an expression)``.
    """
    if not isinstance(text, str):
        raise ExprError(f"predicate must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ExprError("empty predicate")
    try:
        return _Parser(text).parse()
    except RecursionError:
        raise ExprError(f"predicate nested too deeply: {text[:60]!r}...") from None
