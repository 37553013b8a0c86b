"""Parser, canonical printing, refs and substitution of the predicate language."""

from __future__ import annotations

import pytest

from memobench.core.expr import (
    And,
    Call,
    Compare,
    ExprError,
    ListLit,
    Name,
    Not,
    Num,
    Or,
    Ref,
    parse,
    refs,
    substitute,
    walk,
)

a, b, c, d = Name("a"), Name("b"), Name("c"), Name("d")


def call(func: str, *args: object) -> Call:
    return Call(func, tuple(Name(x) if isinstance(x, str) else x for x in args))


# ------------------------------------------------------------------ parsing


def test_parse_task_examples() -> None:
    drawer = Ref("drawer")
    assert parse("and(was_open($drawer), closed($drawer))") == And((call("was_open", drawer), call("closed", drawer)))
    assert parse("in(butter_1, $drawer)") == call("in", "butter_1", drawer)
    assert parse("pour_count(tomato_sauce_1, bowl_1) >= 2") == Compare(
        ">=", call("pour_count", "tomato_sauce_1", "bowl_1"), Num(2)
    )
    assert parse("on($target, plate_1) and not any_on($others, plate_1)") == And(
        (call("on", Ref("target"), "plate_1"), Not(call("any_on", Ref("others"), "plate_1")))
    )


def test_precedence_not_and_or() -> None:
    assert parse("a or b and not c") == Or((a, And((b, Not(c)))))
    assert parse("not a and b") == And((Not(a), b))
    assert parse("(a or b) and c") == And((Or((a, b)), c))
    assert parse("not not a") == Not(Not(a))
    assert parse("not a < 2") == Not(Compare("<", a, Num(2)))


def test_same_operator_chains_flatten_left_to_right() -> None:
    assert parse("a and b and c or d") == Or((And((a, b, c)), d))
    # Explicit nesting is kept, so the tree shape round-trips.
    assert parse("(a and b) and c") == And((And((a, b)), c))


def test_call_forms_equal_infix_forms() -> None:
    assert parse("and(a, b, c)") == parse("a and b and c")
    assert parse("or(a, b)") == parse("a or b")
    assert parse("not(a)") == Not(a)
    assert parse("and(or(a, b), not(c))") == And((Or((a, b)), Not(c)))


def test_terms() -> None:
    assert parse("f(1, 2.5, .5, -0.25, 1e-3)") == Call("f", (Num(1), Num(2.5), Num(0.5), Num(-0.25), Num(0.001)))
    assert parse("f($bind.key, $x)") == Call("f", (Ref("bind", "key"), Ref("x")))
    assert parse("any_on([milk_2, $m, milk_3], plate_1)") == Call(
        "any_on", (ListLit((Name("milk_2"), Ref("m"), Name("milk_3"))), Name("plate_1"))
    )
    assert parse("f([], g())") == Call("f", (ListLit(()), Call("g", ())))
    assert parse("wooden_cabinet_1_top_region") == Name("wooden_cabinet_1_top_region")
    assert parse("  tilt(x)\n<=\t0.3 ") == Compare("<=", call("tilt", "x"), Num(0.3))


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_every_comparison_operator(op: str) -> None:
    assert parse(f"height(x) {op} 0.1") == Compare(op, call("height", "x"), Num(0.1))


ROUND_TRIP = [
    "and(was_open($drawer), closed($drawer))",
    "on($target, plate_1) and not any_on($others, plate_1)",
    "pour_count(tomato_sauce_1, bowl_1) >= 2",
    "a or b and not c or (d or a)",
    "not (a and b) or not (c or d)",
    "(a < b) < -0.5",
    "and(and(a, b), c)",
    "f($a.b, [1, $c, x], [])",
    "held(grasped(x), 3) and then(ever(open(d)), closed(d))",
    "distance(a, b) != 1e-05",
    "not not a",
    "tilt(a) == height(b)",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text: str) -> None:
    expr = parse(text)
    assert parse(str(expr)) == expr
    assert str(parse(str(expr))) == str(expr)  # canonical text is a fixed point


def test_canonical_text() -> None:
    assert str(parse("and( was_open( $d ),closed($d) )")) == "was_open($d) and closed($d)"
    assert str(parse("f(2.0, 0.50, -3)")) == "f(2, 0.5, -3)"
    assert str(And((Or((a, b)), c))) == "(a or b) and c"
    assert str(Or((And((a, b)), c))) == "a and b or c"
    assert str(Not(And((a, b)))) == "not (a and b)"
    assert str(Compare("<", Not(a), Num(1))) == "(not a) < 1"


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("and(open(x),))", 13, "unexpected ')'"),
        ("on(a, b", 8, "unexpected end of input"),
        ("a and", 6, "unexpected end of input"),
        ("open(x) @ b", 9, "unexpected character '@'"),
        ("$ x", 1, "binding name after '$'"),
        ("and(a)", 1, "and() needs at least 2 arguments, got 1"),
        ("or()", 1, "or() needs at least 2 arguments, got 0"),
        ("a < b < c", 7, "no second comparison"),
        ("and and b", 1, "unexpected 'and'"),
        ("f(a b)", 5, "expected ',' or ')'"),
        ("x not", 3, "unexpected 'not'"),
        ("[a, b", 6, "expected ',' or ']'"),
        ("(a or b", 8, "expected ')'"),
        ("on($and, b)", 4, "binding 'and' is not a valid name"),
    ],
)
def test_parse_error_names_problem_and_column(text: str, column: int, fragment: str) -> None:
    with pytest.raises(ExprError) as info:
        parse(text)
    msg = str(info.value)
    assert fragment in msg
    assert f'at column {column} in "{text}"' in msg
    assert info.value.position == column - 1


def test_parse_error_is_value_error_and_odd_input() -> None:
    assert issubclass(ExprError, ValueError)
    with pytest.raises(ExprError, match="empty predicate"):
        parse("   ")
    with pytest.raises(ExprError, match="nested too deeply"):
        parse("not " * 5000 + "a")
    with pytest.raises(ExprError, match="must be a string"):
        parse(3)  # type: ignore[arg-type]


def test_nodes_reject_values_that_would_not_round_trip() -> None:
    with pytest.raises(ExprError):
        Name("and")
    with pytest.raises(ExprError):
        Name("milk-1")
    with pytest.raises(ExprError):
        And((a,))
    with pytest.raises(ExprError):
        Num(float("inf"))
    with pytest.raises(ExprError):
        Compare("=", a, b)
    assert And([a, b]).operands == (a, b)  # lists are frozen into tuples
    assert hash(parse("f([a], b)")) == hash(parse("f([a],b)"))


# --------------------------------------------------------- refs, substitute


def test_refs_and_walk() -> None:
    expr = parse("on($target, plate_1) and not any_on($others, plate_1) or in(x, $d.region)")
    assert refs(expr) == {"target", "others", "d"}
    assert refs(parse("on(a, b)")) == set()
    assert sum(isinstance(n, Name) for n in walk(expr)) == 3


def test_substitute_names_lists_keys_and_numbers() -> None:
    expr = parse("on($target, plate_1) and not any_on($others, plate_1) and in(x, $d.region)")
    binding = {
        "target": "milk_1",
        "others": ["milk_2", "milk_3"],
        "d": {"region": "wooden_cabinet_1_top_region", "joint": "top"},
        "unused": "zzz",
    }
    out = substitute(expr, binding)
    assert out == parse(
        "on(milk_1, plate_1) and not any_on([milk_2, milk_3], plate_1) and in(x, wooden_cabinet_1_top_region)"
    )
    assert refs(out) == set()
    assert substitute(parse("held(x, $n)"), {"n": 3}) == Call("held", (Name("x"), Num(3)))
    assert substitute(parse("on(a, b)"), {}) == parse("on(a, b)")


def test_substitute_unbound_names_it_and_lists_available() -> None:
    with pytest.raises(ExprError, match=r"unbound reference \$drawer \(bound: \$item, \$target\)"):
        substitute(parse("open($drawer)"), {"target": "a", "item": "b"})


def test_substitute_missing_key_lists_keys() -> None:
    with pytest.raises(ExprError, match=r"\$d\.handle: \$d has no key 'handle' \(keys: joint, region\)"):
        substitute(parse("open($d.handle)"), {"d": {"region": "r", "joint": "j"}})


@pytest.mark.parametrize(
    ("binding", "fragment"),
    [
        ({"d": "top"}, "not a mapping"),
        ({"d": {"k": True}}, "cannot substitute True"),
        ({"d": {"k": [1, 2]}}, "cannot substitute [1, 2]"),
        ({"d": {"k": "not a name"}}, "not a valid name"),
    ],
)
def test_substitute_bad_values(binding: dict, fragment: str) -> None:
    with pytest.raises(ExprError) as info:
        substitute(parse("open($d.k)"), binding)
    assert fragment in str(info.value)
    assert "$d.k" in str(info.value)
