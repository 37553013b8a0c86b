"""Rules that close the free registers of a scene (docs/protocol.md, "Registers").

A memoryless policy can pass a memory task by writing what it should remember into
the world and reading it back later: a nudged plate, a drawer left ajar, the arm
parked at the handle of the drawer it just shut, where a pour ended. Under
MEMOBench's protocol every task therefore gets, besides the commitments its file
declares, these rules (each a violation, classed ``over_execution``):

- ``disturbed:<o>``: an object no checkpoint is about stays within
  :data:`DISTURB_DISTANCE` and :data:`DISTURB_TURN` of its start pose, all episode (one
  that starts in a drawer, of its place in the drawer: the drawer may be opened);
- ``moved-early:<o>``: an object the task moves only at a later checkpoint (the
  bowl served after the check) stays so until that checkpoint is the current one;
- ``ajar:<part>``: no drawer, door or knob rests between shut and open for
  :data:`AJAR_STEPS` steps in a row;
- the pour zone (:data:`POUR_ZONE`): each counted pour starts and ends over the target.

"About" means the object is a predicate's first argument in a checkpoint (``on(a, b)``
is about ``a``; ``b``, a receiver, never needs to move). The task file's home gates
(``home:``, :class:`~memobench.core.spec.HomeGateSpec`) close the arm's pose the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from memobench.core import expr
from memobench.core.bddl_names import declared_section, start_containers

if TYPE_CHECKING:
    from memobench.core.tracker import TrackedCheckpoint

DISTURB_DISTANCE = 0.03  # metres: a nudge a policy makes on purpose, not one a placement makes
DISTURB_TURN = 0.35  # radians (20 degrees), about any axis
AJAR_STEPS = 30  # consecutive resting steps between shut and open
# Metres, xy, bottle origin to target, at the start and the end of each counted pour. The expert holds
# the bottle beside the target and tilts it over: first pours start 7.2-8.5 cm out, second pours 8.9-9.6 cm,
# every pour ends 5.5-6.7 cm out (T09, T10, 3 episodes each, 2026-12-07); RoboMemArena's near radius is
# 15-20 cm.
POUR_ZONE = 0.12
# The articulated parts of each fixture category, by the names predicates know them by, and the
# state predicate that says a part is shut (a knob: off).
FIXTURE_PARTS = {
    "wooden_cabinet": (("{}_top_region", "{}_middle_region", "{}_bottom_region"), "closed"),
    "microwave": (("{}",), "closed"),
    "flat_stove": (("{}",), "turned_off"),
}


def subjects(predicate: expr.Expr) -> set[str]:
    """The names a predicate is about: the first argument of each call (each element of a list there)."""
    found: set[str] = set()
    for node in expr.walk(predicate):
        if isinstance(node, expr.Call) and node.args:
            first = node.args[0]
            if isinstance(first, expr.Name):
                found.add(first.name)
            elif isinstance(first, expr.ListLit):
                found.update(item.name for item in first.items if isinstance(item, expr.Name))
    return found


def first_moves(predicates: Sequence[expr.Expr], objects: Iterable[str]) -> dict[str, int]:
    """Object -> index of the first checkpoint (of ``predicates``, in order) that is about it."""
    moves: dict[str, int] = {}
    for index, predicate in enumerate(predicates):
        for name in sorted(subjects(predicate) & set(objects)):
            moves.setdefault(name, index)
    return moves


def still_rules(
    objects: Iterable[str],
    moves: dict[str, int],
    predecessor: Sequence[int | None],
    free: Iterable[str] = (),
    containers: dict[str, str] | None = None,
) -> list[tuple[str, str, int | None]]:
    """(name, predicate, until) of the disturbed / moved-early rules.

    ``moves`` maps an object to the first checkpoint about it; ``predecessor[k]`` is the
    checkpoint whose completion makes checkpoint ``k`` current (None: current from the start).
    An object first moved by a checkpoint current from the start gets no rule, and neither
    does one in ``free`` (the task file's ``moves_early``) that some checkpoint is about.
    An object in ``containers`` (object -> the region it starts in: a drawer's inside) is
    measured against that region, so a drawer opened to look in does not disturb what it holds.
    """
    rules = []
    free, containers = set(free), containers or {}
    for name in sorted(objects):
        moved = f"displacement_in({name}, {containers[name]})" if name in containers else f"displacement({name})"
        text = f"{moved} > {DISTURB_DISTANCE} or rotation({name}) > {DISTURB_TURN}"
        if name not in moves:
            rules.append((f"disturbed:{name}", text, None))
        elif predecessor[moves[name]] is not None and name not in free:
            rules.append((f"moved-early:{name}", text, predecessor[moves[name]]))
    return rules


def object_rules(
    bddl: str, checkpoints: Sequence[TrackedCheckpoint], free: Iterable[str] = ()
) -> list[tuple[str, str, int | None]]:
    """(name, predicate, until) of the disturbed / moved-early rules of a problem whose tracked
    sequence (checkpoints and gates, predicates bound) is ``checkpoints``; ``free`` as in
    :func:`still_rules`."""
    objects = declared_section(bddl, "objects")
    # Checkpoint k is current once the last required checkpoint (or gate) before it completed.
    predecessor: list[int | None] = []
    last: int | None = None
    for i, cp in enumerate(checkpoints):
        predecessor.append(last)
        if not cp.optional:
            last = i
    moves = first_moves([cp.predicate for cp in checkpoints], objects)
    return still_rules(objects, moves, predecessor, free, start_containers(bddl))


def fixture_parts(fixtures: dict[str, str]) -> list[tuple[str, str]]:
    """(part, shut predicate) of each articulated part (drawer, door, knob) of a scene's fixtures
    (instance name -> BDDL category)."""
    found = []
    for name, category in sorted(fixtures.items()):
        parts, shut = FIXTURE_PARTS.get(category, ((), ""))
        found += [(part.format(name), shut) for part in parts]
    return found


def ajar_rules(parts: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(name, predicate) of the ajar rule of each articulated part (as :func:`fixture_parts` gives them)."""
    return [(f"ajar:{part}", f"held(ajar({part}), {AJAR_STEPS})") for part, _ in parts]


def fingerprint() -> dict:
    """Every constant of these rules: part of each task's spec hash, since they judge its episodes."""
    return {
        "disturb": [DISTURB_DISTANCE, DISTURB_TURN],
        "ajar_steps": AJAR_STEPS,
        "pour_zone": POUR_ZONE,
        "parts": {category: [list(parts), shut] for category, (parts, shut) in FIXTURE_PARTS.items()},
    }
