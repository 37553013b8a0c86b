"""Reading a cue from its robot states.

A pointing cue (object tasks): which objects did the hand stop over, in what
order (:func:`pointed_objects`). A demonstration (procedural tasks): what did
the hand pick up, where did it let go, in what order (:func:`moves`).

A cue state is the robot state of one recorded frame: end-effector position
(3), axis-angle (3), the two gripper finger joints (2). The scene passed
with them is the restored initial scene, so objects are where they stood
before the cue moved them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memobench.experts.scene import Scene

POINTED_RADIUS = 0.03  # metres (xy) between the hovering hand and an object's origin
DWELL_SPEED = 0.004  # metres between recorded cue states (2 steps apart) while the hand hovers
# Finger gap change (metres) between consecutive cue states that means the fingers are
# closing or opening. They travel ~0.07 in ~10 steps, >= 0.006 a step (measured on every
# P routine; the smallest grip change, closing on the orange juice carton, is 0.021), and
# move < 0.002 a state while holding still or carrying: so states 1 to 4 steps apart work.
GAP_CHANGE = 0.005
# Metres (xy) between the hand and an object's initial origin for a grasp or a release to
# be at that object. Bowls are taken by the rim, the hand ~5 cm off the bowl's origin; the
# routines' objects stand >= 13 cm apart.
HANDLE_RADIUS = 0.08


def pointed_objects(cue_states: Sequence[np.ndarray], candidates: Sequence[str], scene: Scene) -> list[str]:
    """Candidates the cue's hand stopped over, in the order it first stopped over them.

    ``cue_states`` are the robot states recorded during the cue (end-effector
    position first); the scene is the restored initial scene, so the objects
    are where they were when the cue pointed at them. Only states where the
    hand hovers (hardly moves) count: on its way from one end of a row of
    objects to the other the hand passes over the middle one without pointing
    at it (counting passes misread 12 of 40 P04 cues).
    """
    positions = {name: scene.pos(name)[:2] for name in candidates}
    order: list[str] = []
    previous = None
    for state in cue_states:
        hand = np.asarray(state[:3], dtype=float)
        hovering = previous is not None and np.linalg.norm(hand - previous) < DWELL_SPEED
        previous = hand
        if not hovering:
            continue
        for name, xy in positions.items():
            if name not in order and np.linalg.norm(hand[:2] - xy) < POINTED_RADIUS:
                order.append(name)
    return order


@dataclass(frozen=True)
class Handling:
    """One grasp of a demonstration: the hand's position when its fingers began to close
    (``pick``) and when they began to open again (``place``, None if still closed at the end)."""

    pick: np.ndarray
    place: np.ndarray | None


def finger_gap(state: np.ndarray) -> float:
    """Distance between the two finger joints of a robot state (~0.08 open)."""
    return float(state[6] - state[7])


def handlings(cue_states: Sequence[np.ndarray]) -> list[Handling]:
    """Every grasp of the cue, in order: the fingers closing, then opening again.

    The fingers count as closing when their gap falls by more than
    :data:`GAP_CHANGE` between consecutive states, and as opening when it rises by
    as much; in between, the grip holds whatever width the object gave it. The
    hand starts open (a rising gap before the first grasp is ignored).
    """
    found: list[Handling] = []
    pick: np.ndarray | None = None
    for previous, state in zip(cue_states, cue_states[1:], strict=False):
        change = finger_gap(state) - finger_gap(previous)
        hand = np.asarray(state[:3], dtype=float)
        if pick is None and change < -GAP_CHANGE:
            pick = hand
        elif pick is not None and change > GAP_CHANGE:
            found.append(Handling(pick, hand))
            pick = None
    if pick is not None:
        found.append(Handling(pick, None))
    return found


def nearest(point: np.ndarray, candidates: Sequence[str], scene: Scene, radius: float = HANDLE_RADIUS) -> str | None:
    """The candidate whose origin in ``scene`` is nearest ``point`` in xy, if within ``radius``."""
    if not candidates:
        return None
    distances = [float(np.linalg.norm(scene.pos(name)[:2] - point[:2])) for name in candidates]
    best = int(np.argmin(distances))
    return candidates[best] if distances[best] < radius else None


def moves(
    cue_states: Sequence[np.ndarray], objects: Sequence[str], places: Sequence[str], scene: Scene
) -> list[tuple[str, str]]:
    """(object, place) for each grasp of the cue that took one of ``objects`` and let it go at one of ``places``.

    Both are read against where things stood in ``scene`` (the initial scene):
    an object picked up again from where the routine had put it is not one of
    ``objects`` any more, and a place is the spot a thing stood on at first
    (a bowl put into a bowl already stacked lets go over the stack's bottom).
    Grasps that let go where they took (a failed grasp, retried) are left out.
    """
    found = []
    for grasp in handlings(cue_states):
        if grasp.place is None:
            continue
        taken, put = nearest(grasp.pick, objects, scene), nearest(grasp.place, places, scene)
        if taken is not None and put is not None and taken != put:
            found.append((taken, put))
    return found
