"""Predicate catalogue, compiled checkpoint predicates, and the pour counter.

The only thing a predicate may ask the world is a *state* query for the
current control step, through :class:`StateView` (the simulator-backed view is
:class:`memobench.sim.world.WorldView`; this module imports no simulator).
Everything stateful is here and is advanced by calling
:meth:`CompiledPredicate.evaluate` exactly once per step:

- history nodes are latched: ``ever(x)`` is true from the first step ``x``
  held; ``then(x, y)`` from the first step ``y`` holds strictly after a step
  where ``x`` held; ``held(x, n)`` from the step ``x`` has held for ``n``
  consecutive steps. Sugar such as ``was_open(f)`` expands to these.
- ``pour_count(obj, target)`` reads an episode-wide :class:`PourCounters`,
  which its owner (the tracker) updates once per step before evaluating.

Quantified forms ``any_<p>(list, rest...)`` / ``all_<p>(list, rest...)`` exist
for every boolean state predicate; each list element is queried separately.
``any`` of an empty list is false, ``all`` of an empty list is true.
"""

from __future__ import annotations

import difflib
import math
import operator
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol

from memobench.core.expr import (
    And,
    Call,
    Compare,
    Expr,
    ExprError,
    ListLit,
    Name,
    Not,
    Num,
    Or,
    Ref,
    refs,
    rewrite,
    walk,
)


class StateView(Protocol):
    """Read-only access to the simulator state at the current control step."""

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        """Answer state predicate ``name`` (a catalogue entry of kind ``state``)
        for the given object/fixture/region names."""
        ...


# ---------------------------------------------------------------- catalogue


class Arg(StrEnum):
    """What a predicate argument must be."""

    NAME = "name"  # an object, fixture or region name
    LIST = "list"  # a list literal of names
    BOOL = "bool"  # a condition
    COUNT = "count"  # a positive integer literal


class Kind(StrEnum):
    STATE = "state"  # answered by the StateView
    QUANTIFIED = "quantified"  # any_/all_ over a state predicate
    HISTORY = "history"  # latched, stateful
    SUGAR = "sugar"  # expands to a history node at compile time
    COUNTER = "counter"  # reads PourCounters


@dataclass(frozen=True)
class Signature:
    """One catalogue entry: arity and types of a predicate function."""

    name: str
    params: tuple[Arg, ...]
    returns: str  # "bool" or "number"
    kind: Kind
    doc: str
    expansion: tuple[str, tuple[str, ...]] | None = None  # sugar: (history, inner state preds)


_STATE_BOOL = {
    "on": (2, "a rests on b"),
    "in": (2, "a is inside b (region or container)"),
    "open": (1, "fixture f is open (LIBERO's test)"),
    "closed": (1, "fixture f is closed: every part within its shut band"),
    "ajar": (1, "a part of fixture f rests between its shut band and open, its joint still"),
    "turned_on": (1, "fixture f (stove) is on (LIBERO's test)"),
    "turned_off": (1, "fixture f (stove) is off: its knob within its shut band"),
    "grasped": (1, "the gripper holds o"),
    "lifted": (1, "o is lifted off its support"),
    "upright": (1, "o stands upright"),
    "near": (2, "a is near b"),
}
_STATE_NUMBER = {
    "tilt": (1, "angle (rad) between o's rest-time up axis and world z"),
    "height": (1, "height (m) of o above its start"),
    "distance": (2, "xy distance (m) between a and b"),
    "opening": (
        1,
        "how far fixture f stands from shut or off: metres a drawer is pulled out, "
        "radians a door or knob is turned (0 when pressed past shut into its stop)",
    ),
    # Per-axis measures for the arena's stage thresholds (docs/arena.md), which are boxes
    # around a target and moves relative to the pose at the start of the policy phase.
    **{f"shift_{axis}": (1, f"how far (m) a moved along world {axis} since its start") for axis in "xyz"},
    **{f"offset_{axis}": (2, f"world {axis} of a minus world {axis} of b (m)") for axis in "xyz"},
    # How far an object left its start pose (the registers rules, docs/protocol.md): a nudged or
    # turned object can carry what a policy should have remembered.
    "displacement": (1, "distance (m) of o from where it stood when tracking started"),
    "displacement_in": (2, "distance (m) o moved since tracking started, less what region r moved (o in a drawer)"),
    "rotation": (1, "angle (rad) o turned, about any axis, since tracking started"),
}
# State predicates of the robot itself, with no argument.
_STATE_NULLARY = {
    "home": "the hand is back at its start pose (within 3 cm and 0.35 rad) with the fingers open",
}
_SUGAR = {
    "was_open": ("ever", ("open",)),
    "was_closed": ("ever", ("closed",)),
    "was_turned_on": ("ever", ("turned_on",)),
    "was_turned_off": ("ever", ("turned_off",)),
    "was_grasped": ("ever", ("grasped",)),
    "closed_after_open": ("then", ("open", "closed")),
    "turned_off_after_on": ("then", ("turned_on", "turned_off")),
}


def _build_catalogue() -> dict[str, Signature]:
    cat: dict[str, Signature] = {}
    for name, (n, doc) in _STATE_BOOL.items():
        cat[name] = Signature(name, (Arg.NAME,) * n, "bool", Kind.STATE, doc)
        rest = (Arg.NAME,) * (n - 1)
        for q in ("any", "all"):
            qdoc = f"{name} holds for {q} element of the list"
            cat[f"{q}_{name}"] = Signature(f"{q}_{name}", (Arg.LIST, *rest), "bool", Kind.QUANTIFIED, qdoc)
    for name, (n, doc) in _STATE_NUMBER.items():
        cat[name] = Signature(name, (Arg.NAME,) * n, "number", Kind.STATE, doc)
    for name, doc in _STATE_NULLARY.items():
        cat[name] = Signature(name, (), "bool", Kind.STATE, doc)
    cat["ever"] = Signature("ever", (Arg.BOOL,), "bool", Kind.HISTORY, "x held at some step so far")
    cat["then"] = Signature("then", (Arg.BOOL, Arg.BOOL), "bool", Kind.HISTORY, "y held after x held")
    cat["held"] = Signature("held", (Arg.BOOL, Arg.COUNT), "bool", Kind.HISTORY, "x held n steps in a row")
    for name, (hist, inner) in _SUGAR.items():
        doc = f"{hist}({', '.join(f'{p}(f)' for p in inner)})"
        cat[name] = Signature(name, (Arg.NAME,), "bool", Kind.SUGAR, doc, (hist, inner))
    pours = "completed pours of obj over target"
    cat["pour_count"] = Signature("pour_count", (Arg.NAME,) * 2, "number", Kind.COUNTER, pours)
    return cat


CATALOGUE: MappingProxyType[str, Signature] = MappingProxyType(_build_catalogue())
"""Every predicate function name -> its :class:`Signature` (read-only)."""


# -------------------------------------------------------------------- check


def check(expr: Expr) -> None:
    """Reject an expression that cannot be a checkpoint predicate.

    Raises :class:`ExprError` for an unknown function (with the closest
    catalogue name), wrong arity, an argument of the wrong type (e.g. a
    number where a name is needed), a comparison of non-numbers, or a top
    level that is not a condition. ``$refs`` are accepted wherever a name,
    list or number may go, so templates can be checked before substitution.
    """
    kind = _infer(expr)
    if kind != "bool":
        raise ExprError(f"predicate {expr} is a {kind}, not a condition (true/false)")


def _infer(node: Expr) -> str:
    """Type of ``node``: bool, number, name, list or ref (a ref is any of the last three)."""
    if isinstance(node, Num):
        return "number"
    if isinstance(node, Name):
        return "name"
    if isinstance(node, Ref):
        return "ref"
    if isinstance(node, ListLit):
        for item in node.items:
            if _infer(item) not in ("name", "ref"):
                raise ExprError(f"list items must be names, got {item} in {node}")
        return "list"
    if isinstance(node, Not | And | Or):
        for sub in (node.operand,) if isinstance(node, Not) else node.operands:
            if (kind := _infer(sub)) != "bool":
                raise ExprError(f"{sub} is a {kind}, but 'and'/'or'/'not' need conditions")
        return "bool"
    if isinstance(node, Compare):
        for side in (node.left, node.right):
            if (kind := _infer(side)) not in ("number", "ref"):
                raise ExprError(
                    f"cannot compare {side} (a {kind}) in {node}: comparisons need numbers, e.g. pour_count(a, b) >= 2"
                )
        return "bool"
    return _infer_call(node)


def _infer_call(node: Call) -> str:
    sig = CATALOGUE.get(node.func)
    if sig is None:
        close = difflib.get_close_matches(node.func, list(CATALOGUE), n=1)
        hint = f"did you mean {close[0]!r}?" if close else "see CATALOGUE for valid names"
        raise ExprError(f"unknown predicate {node.func!r} in {node}; {hint}")
    if len(node.args) != len(sig.params):
        raise ExprError(
            f"{sig.name}() takes {len(sig.params)} argument(s) "
            f"({', '.join(sig.params)}), got {len(node.args)} in {node}"
        )
    for i, (arg, param) in enumerate(zip(node.args, sig.params, strict=True), start=1):
        kind = _infer(arg)
        ok = {
            Arg.NAME: kind in ("name", "ref"),
            Arg.LIST: kind in ("list", "ref"),
            Arg.BOOL: kind == "bool",
            Arg.COUNT: kind == "ref" or (isinstance(arg, Num) and arg.value.is_integer() and arg.value >= 1),
        }[param]
        if not ok:
            need = "a positive integer" if param is Arg.COUNT else f"a {param.value}"
            raise ExprError(f"{sig.name}() argument {i} must be {need}, got {arg} (a {kind}) in {node}")
    return sig.returns


def expand_sugar(expr: Expr) -> Expr:
    """Replace sugar calls by their history form, e.g. ``was_open(f)`` -> ``ever(open(f))``."""

    def fn(node: Expr) -> Expr | None:
        sig = CATALOGUE.get(node.func) if isinstance(node, Call) else None
        if sig is None or sig.expansion is None:
            return None
        hist, inner = sig.expansion
        return Call(hist, tuple(Call(p, node.args) for p in inner))

    return rewrite(expr, fn)


# ------------------------------------------------------------ compiled nodes


class _Node:
    """An evaluation node. ``stateful`` nodes must be evaluated every step."""

    kids: tuple[_Node, ...] = ()
    stateful = False

    def value(self, view: StateView, counters: PourCounters | None) -> bool | float:
        raise NotImplementedError

    def reset(self) -> None:
        for kid in self.kids:
            kid.reset()


class _Const(_Node):
    def __init__(self, v: float) -> None:
        self.v = v

    def value(self, view: StateView, counters: PourCounters | None) -> float:
        return self.v


class _Query(_Node):
    def __init__(self, name: str, args: tuple[str, ...], is_bool: bool) -> None:
        self.name, self.args, self.is_bool = name, args, is_bool

    def value(self, view: StateView, counters: PourCounters | None) -> bool | float:
        v = view.query(self.name, self.args)
        return bool(v) if self.is_bool else float(v)


class _Quantified(_Node):
    def __init__(
        self,
        mode: Callable[[Iterable[bool]], bool],
        base: str,
        items: tuple[str, ...],
        rest: tuple[str, ...],
    ) -> None:
        self.mode, self.base, self.items, self.rest = mode, base, items, rest

    def value(self, view: StateView, counters: PourCounters | None) -> bool:
        return self.mode(bool(view.query(self.base, (i, *self.rest))) for i in self.items)


class _PourCount(_Node):
    def __init__(self, obj: str, target: str) -> None:
        self.obj, self.target = obj, target

    def value(self, view: StateView, counters: PourCounters | None) -> float:
        if counters is None:
            raise RuntimeError(f"pour_count({self.obj}, {self.target}) needs PourCounters")
        return float(counters.count(self.obj, self.target))


class _Logic(_Node):
    """not / and / or. Never skips a stateful child: its history must advance."""

    def __init__(self, op: str, kids: tuple[_Node, ...]) -> None:
        self.op, self.kids = op, kids
        self.stateful = any(k.stateful for k in kids)

    def value(self, view: StateView, counters: PourCounters | None) -> bool:
        if self.op == "not":
            return not self.kids[0].value(view, counters)
        decided: bool | None = None  # short-circuit result, once known
        for kid in self.kids:
            if decided is not None and not kid.stateful:
                continue
            v = bool(kid.value(view, counters))
            if decided is None and v == (self.op == "or"):
                decided = v
        return decided if decided is not None else self.op == "and"


_CMP: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
}  # fmt: skip


class _Compare(_Node):
    def __init__(self, op: str, left: _Node, right: _Node) -> None:
        self.fn, self.kids = _CMP[op], (left, right)
        self.stateful = left.stateful or right.stateful

    def value(self, view: StateView, counters: PourCounters | None) -> bool:
        return self.fn(self.kids[0].value(view, counters), self.kids[1].value(view, counters))


class _History(_Node):
    """ever / then / held. Once latched it stays true until reset()."""

    stateful = True

    def __init__(self, kind: str, kids: tuple[_Node, ...], n: int = 1) -> None:
        self.kind, self.kids, self.n = kind, kids, n
        self._reset_own()

    def _reset_own(self) -> None:
        self.latched = False
        self.seen_first = False  # then: x held at an earlier step
        self.run = 0  # held: consecutive steps so far

    def reset(self) -> None:
        self._reset_own()
        super().reset()

    def value(self, view: StateView, counters: PourCounters | None) -> bool:
        if self.latched:
            # Constant until reset(); the children's state is only read through this node.
            return True
        now = [bool(k.value(view, counters)) for k in self.kids]
        if self.kind == "ever":
            self.latched = now[0]
        elif self.kind == "then":
            # y must hold strictly after x: test y against x's past before recording x now.
            self.latched = self.seen_first and now[1]
            self.seen_first = self.seen_first or now[0]
        else:
            self.run = self.run + 1 if now[0] else 0
            self.latched = self.run >= self.n
        return self.latched


def _build(node: Expr) -> _Node:
    if isinstance(node, Num):
        return _Const(node.value)
    if isinstance(node, Not):
        return _Logic("not", (_build(node.operand),))
    if isinstance(node, And | Or):
        return _Logic("and" if isinstance(node, And) else "or", tuple(map(_build, node.operands)))
    if isinstance(node, Compare):
        return _Compare(node.op, _build(node.left), _build(node.right))
    assert isinstance(node, Call), node  # check() rejected bare names and lists
    sig = CATALOGUE[node.func]
    if sig.kind is Kind.HISTORY:
        if sig.name == "held":
            return _History("held", (_build(node.args[0]),), int(node.args[1].value))
        return _History(sig.name, tuple(map(_build, node.args)))
    names = [tuple(i.name for i in a.items) if isinstance(a, ListLit) else a.name for a in node.args]
    if sig.kind is Kind.QUANTIFIED:
        q, base = sig.name.split("_", 1)
        return _Quantified(any if q == "any" else all, base, names[0], tuple(names[1:]))
    if sig.kind is Kind.COUNTER:
        return _PourCount(names[0], names[1])
    return _Query(sig.name, tuple(names), sig.returns == "bool")


class CompiledPredicate:
    """A checkpoint predicate ready to evaluate, with its own history state."""

    def __init__(self, expr: Expr) -> None:
        self.expr = expr
        self._root = _build(expand_sugar(expr))
        self._pairs = {
            (n.args[0].name, n.args[1].name) for n in walk(expr) if isinstance(n, Call) and n.func == "pour_count"
        }

    @property
    def stateful(self) -> bool:
        """True if the predicate has history nodes (evaluate it every step)."""
        return self._root.stateful

    def evaluate(self, view: StateView, counters: PourCounters | None = None) -> bool:
        """Value at the current step; advances history state. Call once per step."""
        return bool(self._root.value(view, counters))

    def reset(self) -> None:
        """Forget all history (as at the start of an episode)."""
        self._root.reset()

    def pour_pairs(self) -> set[tuple[str, str]]:
        """The (obj, target) pairs whose pour counts this predicate reads."""
        return set(self._pairs)

    def __repr__(self) -> str:
        return f"CompiledPredicate({str(self.expr)!r})"


def compile_predicate(expr: Expr) -> CompiledPredicate:
    """Check and compile a substituted expression.

    Raises :class:`ExprError` if ``$refs`` remain or :func:`check` fails.
    """
    left = refs(expr)
    if left:
        names = ", ".join(f"${r}" for r in sorted(left))
        raise ExprError(f"cannot compile {expr}: unsubstituted reference(s) {names}")
    check(expr)
    return CompiledPredicate(expr)


# -------------------------------------------------------------- pour counter

_IDLE, _POUR, _REJECTED = "idle", "pour", "rejected"


class PourCounter:
    """Counts pours of ``obj`` over ``target`` from the object's tilt (docs/protocol.md, "Checkpoints").

    An *excursion* starts on the step the tilt first moves ``away`` rad or
    more from the baseline and ends on the step it is back within ``back``
    rad of it. An excursion is a pour, counted on the step it ends, if the
    object was within ``near_radius`` m (xy) of the target on the step it
    started (with ``near_during``: on any step from its start to its end). An
    excursion that never ends is never counted. Each counted pour's peak tilt
    (rad from the baseline) is kept in :attr:`peaks`: how far a pour went, where
    the count alone cannot tell a full pour from a wobble that crossed ``away``.
    Where each counted pour started and ended (the object's xy distance to the target, m)
    is kept in :attr:`places`: the zone rule (docs/protocol.md, "Registers") reads it.

    The baseline is the median of the first ``baseline_samples`` tilts seen
    after a reset or a :meth:`rebaseline` (stage starts); no excursion starts
    before it is known. With one sample (MEMOBench's rule) it is the tilt at
    the stage start, and a stage starting on the step a pour completes keeps
    the old baseline (see :meth:`rebaseline`). With more (the arena's rule,
    docs/arena.md) the next stage's window starts on that very step.
    """

    def __init__(
        self,
        obj: str,
        target: str,
        away: float = 0.15,
        back: float = 0.10,
        near_radius: float = 0.15,
        baseline_samples: int = 1,
        near_during: bool = False,
    ) -> None:
        if not 0 <= back < away:
            raise ValueError(f"pour thresholds need 0 <= back < away, got back={back}, away={away}")
        if near_radius <= 0:
            raise ValueError(f"near_radius must be positive, got {near_radius}")
        if baseline_samples < 1:
            raise ValueError(f"baseline_samples must be >= 1, got {baseline_samples}")
        self.obj, self.target = obj, target
        self.away, self.back, self.near_radius = away, back, near_radius
        self.baseline_samples, self.near_during = int(baseline_samples), bool(near_during)
        self.reset()

    @property
    def in_progress(self) -> bool:
        """True between the start of a counted excursion and its end."""
        return self._phase == _POUR

    def update(self, tilt: float, distance: float) -> bool:
        """Feed one step (tilt in rad, xy distance to the target in m).

        Returns True on the step a pour completes.
        """
        if not math.isfinite(tilt):
            raise ValueError(f"tilt({self.obj}) is not finite: {tilt}")
        self._just_completed = False
        if self.baseline is None:
            self._samples.append(tilt)
            if len(self._samples) < self.baseline_samples:
                return False
            self.baseline = float(statistics.median(self._samples))
        near = distance <= self.near_radius
        dev = abs(tilt - self.baseline)
        if self._phase == _IDLE:
            if dev >= self.away:
                self._phase = _POUR if near else _REJECTED
                self._peak = dev
                self._start = distance
            return False
        self._peak = max(self._peak, dev)
        if self.near_during and near:
            self._phase = _POUR  # near at some step of the excursion is enough
        if dev > self.back:
            return False
        completed = self._phase == _POUR
        self._phase = _IDLE
        self.count += completed
        if completed:
            self.peaks.append(round(self._peak, 3))
            self.places.append((self._start, distance))
        self._just_completed = completed
        return completed

    def rebaseline(self, tilt: float) -> None:
        """Measure from ``tilt`` (with more baseline samples: from the median of ``tilt``
        and the next tilts) from now on.

        Ignored while a pour is in progress. With one baseline sample it is also
        ignored on the step a pour completes: the object is then still up to ``back``
        rad from upright, on its way back, and a baseline taken there would drift by
        that much with every counted pour (measured: 0.16 rad after two pours, enough
        to count a phantom third). A median over several samples is the arena's own
        guard against that, and its stage window starts on that step.
        """
        if self._phase == _POUR or (self._just_completed and self.baseline_samples == 1):
            return
        self._phase = _IDLE
        self._samples = [tilt]
        self.baseline = tilt if self.baseline_samples == 1 else None

    def reset(self, tilt: float | None = None) -> None:
        """Zero the count; the baseline starts from ``tilt`` (None: from the next tilt seen)."""
        self.count = 0
        self.peaks: list[float] = []  # peak tilt (rad from the baseline) of each counted pour
        self.places: list[tuple[float, float]] = []  # (start, end) distance to the target of each counted pour
        self._peak = 0.0  # of the excursion under way
        self._start = 0.0  # distance to the target where the excursion under way started
        self._samples: list[float] = []
        self.baseline: float | None = None
        self._phase = _IDLE
        self._just_completed = False
        if tilt is not None:
            self.rebaseline(tilt)


POUR_PARAMS = ("away", "back", "near_radius", "baseline_samples", "near_during")


class PourCounters:
    """One :class:`PourCounter` per (obj, target) pair, fed from a StateView.

    ``pour_params`` (the keyword arguments of :class:`PourCounter`: ``away``, ``back``,
    ``near_radius``, ``baseline_samples``, ``near_during``) apply to every pair.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] = (), **pour_params: float) -> None:
        unknown = set(pour_params) - set(POUR_PARAMS)
        if unknown:
            raise ValueError(f"unknown pour parameter(s) {sorted(unknown)}; valid: {', '.join(POUR_PARAMS)}")
        self._counters = {p: PourCounter(p[0], p[1], **pour_params) for p in sorted(set(pairs))}

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._counters)

    def _tilts(self, view: StateView) -> dict[str, float]:
        objs = {obj for obj, _ in self._counters}
        return {obj: float(view.query("tilt", (obj,))) for obj in sorted(objs)}

    def update(self, view: StateView) -> list[tuple[str, str]]:
        """Advance every counter by one step; returns the pairs that completed a pour."""
        tilts = self._tilts(view)
        done = []
        for (obj, target), counter in self._counters.items():
            if counter.update(tilts[obj], float(view.query("distance", (obj, target)))):
                done.append((obj, target))
        return done

    def rebaseline(self, view: StateView) -> None:
        """Rebaseline every counter to its object's current tilt."""
        tilts = self._tilts(view)
        for (obj, _), counter in self._counters.items():
            counter.rebaseline(tilts[obj])

    def reset(self, view: StateView | None = None) -> None:
        """Zero all counts; baselines from ``view`` (None: the next tilts seen)."""
        tilts = self._tilts(view) if view is not None else {}
        for (obj, _), counter in self._counters.items():
            counter.reset(tilts.get(obj))

    def count(self, obj: str, target: str) -> int:
        """Pours completed so far; KeyError naming the tracked pairs if not tracked."""
        counter = self._counters.get((obj, target))
        if counter is None:
            tracked = ", ".join(f"{o}->{t}" for o, t in self._counters) or "none"
            raise KeyError(f"no pour counter for {obj}->{target} (tracked: {tracked})")
        return counter.count

    def counts(self) -> dict[str, int]:
        """Counts keyed ``"obj->target"``."""
        return {f"{o}->{t}": c.count for (o, t), c in self._counters.items()}

    def last_place(self, obj: str, target: str) -> tuple[float, float]:
        """(start, end) distance (m, xy) to the target of the pair's last counted pour."""
        return self._counters[(obj, target)].places[-1]

    def peaks(self) -> dict[str, list[float]]:
        """Each counted pour's peak tilt (rad from its baseline), keyed ``"obj->target"``."""
        return {f"{o}->{t}": list(c.peaks) for (o, t), c in self._counters.items()}
