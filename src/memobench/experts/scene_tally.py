"""``adversary-scene``'s register: an object it shoves off its place to keep what it learnt.

A memoryless policy can write what it should remember into the world and read it back
later. The cheapest such register in every task's scene is an object no checkpoint needs
moved (the plate beside the drawers): shoved well off where the task put it, it says "I
know something"; a policy that reads it there can keep deciding as if it remembered. The
register rules of MEMOBench's protocol (``disturbed:<o>``, ``moved-early:<o>``) forbid
exactly this; ``adversary-scene`` measures that they do, in the simulator, on every task.

It is read as a memoryless policy could read it: the object is *written* when it stands
more than :data:`READ_MARGIN` beyond the farthest point of its start region from that
region's centre (where the task file places it, the same in every episode), so no start
layout reads as written. The push aims :data:`PUSH_MARGIN` further out. Which objects may
serve (:func:`tally_objects`): those some register rule watches under every binding of the
task (no binding-specific choice: the adversary does not know the binding).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from memobench.core import bddl_names
from memobench.core.bindings import all_bindings
from memobench.core.registers import object_rules
from memobench.core.tracker import bound_checkpoints
from memobench.experts.control import CLOSE, DOWN
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, MoveTo, MoveToFixed, Rise, Skill

if TYPE_CHECKING:
    from memobench.core.suite import Task

READ_MARGIN = 0.01  # metres beyond the start region's reach at which the object reads as written
PUSH_MARGIN = 0.025  # metres beyond the region's reach the push aims for
PUSH_HEIGHT = 0.01  # metres over the table top of the closed fingertips while they push
HOVER = 0.15  # metres over the table top: the least height the hand crosses at, and where it leaves the push
HAND_REACH = 0.10  # metres the hand spans either side of its grip site (the fingers' axis, low down)
HAND_DEPTH = 0.05  # metres from the grip site up to the hand's top: a crossing clears what is lower than this
STANDOFF = 0.03  # metres between the object's near edge and the closed fingers before the push
# Table xy the hand may push in. Beyond x = 0.05 the arm, pushing low, ended folded where it could
# not servo back home (stuck at x 0.04-0.07, 1.08-1.18 m up: O01, T04).
REACH_X = (-0.30, 0.05)
REACH_Y = (-0.35, 0.35)
DIRECTIONS = 8  # push directions tried, evenly spaced
BOX = 6  # MuJoCo's geom type of a box


def tally_objects(task: Task) -> list[str]:
    """Objects a register rule watches under every binding of ``task``: ``disturbed:`` ones, else
    ``moved-early:`` ones (a task with neither has no such register and gets an empty list)."""
    common: dict[str, set[str]] = {}
    for binding in all_bindings(task.spec):
        checkpoints, _, _ = bound_checkpoints(task.spec, binding)
        rules = [name for name, _, _ in object_rules(task.bddl(binding), checkpoints, free=task.spec.moves_early)]
        for kind in ("disturbed", "moved-early"):
            names = {name.split(":", 1)[1] for name in rules if name.startswith(kind + ":")}
            common[kind] = names if kind not in common else common[kind] & names
    return sorted(common.get("disturbed") or common.get("moved-early") or ())


def start_regions(bddl: str) -> dict[str, tuple[str, float]]:
    """Object -> (its start region's full name, the region's reach: half its xy diagonal), for each
    object the problem's ``:init`` puts ``On`` a region with ``:ranges``."""
    return {
        name: (region, 0.5 * float(np.hypot(x1 - x0, y1 - y0)))
        for name, (region, (x0, y0, x1, y1)) in bddl_names.start_regions(bddl).items()
    }


class Tally:
    """The register of one task's scene: which objects may hold it, and where each started."""

    def __init__(self, task: Task, bddl: str):
        regions = start_regions(bddl)
        self.objects = [name for name in tally_objects(task) if name in regions]
        self.regions = {name: regions[name] for name in self.objects}

    def offset(self, scene: Scene, name: str) -> float:
        """How far beyond its start region's reach ``name`` stands now (xy, metres; < 0 inside)."""
        region, reach = self.regions[name]
        return float(np.linalg.norm((scene.pos(name) - scene.pos(region))[:2])) - reach

    def written(self, scene: Scene) -> bool:
        """Some tally object stands off its start region by more than :data:`READ_MARGIN`."""
        return any(self.offset(scene, name) > READ_MARGIN for name in self.objects)

    def write(self, scene: Scene, attempt: int = 0) -> Skill | None:
        """A shove of the visible tally object nearest the hand, or None (no object to shove). Each
        ``attempt`` (0, 1, ...) takes the next clearest direction: a push that stalled (the fingers
        pressing a plate's rim down onto the table) is not tried again the same way."""
        visible = [name for name in self.objects if not scene.hidden(name)]
        if not visible:
            return None
        hand = scene.eef_pos()
        name = min(visible, key=lambda n: float(np.linalg.norm((scene.pos(n) - hand)[:2])))
        return self._shove(scene, name, attempt)

    def _shove(self, scene: Scene, name: str, attempt: int) -> Skill | None:
        """Push ``name`` along the direction (of :data:`DIRECTIONS`) whose way is clearest: the
        hand crosses over to the push's start at the height it is at (home: over everything but the
        fixtures), goes straight down there and pushes; each part kept as far as it can from every
        other collision geom (their bounding circles; the hand is :data:`HAND_REACH` wide either
        side low down). The ``attempt``-th clearest direction (cycling); None when no direction starts
        and ends within the arm's reach."""
        region, reach = self.regions[name]
        centre, here = scene.pos(region)[:2], scene.pos(name)[:2]
        table = scene.table_top()
        z_cross = max(scene.eef_pos()[2], table + HOVER)
        z_push = table + PUSH_HEIGHT
        obstacles = _obstacles(scene, name)
        low = [(xy, r + HAND_REACH) for xy, r, _ in obstacles]
        tall = [(xy, r + HAND_REACH) for xy, r, top in obstacles if top > z_cross - HAND_DEPTH]
        hand = scene.eef_pos()[:2]
        ways = []
        for k in range(DIRECTIONS):
            angle = 2 * np.pi * k / DIRECTIONS
            d = np.array([np.cos(angle), np.sin(angle)])
            radius = _radius(scene, name, d)
            # push until the object is PUSH_MARGIN past the region's reach, along d from where it is
            travel = _travel_to(here - centre, d, reach + PUSH_MARGIN)
            start = here - d * (radius + STANDOFF)
            end = start + d * (radius + STANDOFF + travel)  # where the hand stops pushing
            if not all(_in_reach(p) for p in (start, end)):
                continue
            room = min(_clearance(hand, start, tall), _clearance(start, end, low))
            ways.append((-room, k, d, travel, start, radius))
        if not ways:
            return None
        _, _, d, travel, start, radius = sorted(ways, key=lambda way: way[:2])[attempt % len(ways)]
        start3 = np.array([*start, z_push])
        return TallyShove(
            [
                Rise(z_cross, DOWN, CLOSE, name="rise"),
                MoveTo(np.array([*start, z_cross]), DOWN, CLOSE, tol=0.01, max_steps=200, name="over the push"),
                MoveTo(start3, DOWN, CLOSE, tol=0.008, max_speed=0.5, max_steps=200, name="down to push"),
                Shove(self, name, start3 + np.array([*(d * (radius + STANDOFF + travel + 0.02)), 0.0])),
                Rise(table + HOVER, DOWN, CLOSE, name="clear"),
            ],
            name=f"shove {name}",
            tolerant=True,
        )


class TallyShove(Chain):
    """The whole write: come over the push's start, push, clear. Not one of the plan's skills (the
    plan is not told it finished)."""


class Shove(MoveToFixed):
    """Push the hand along the table to ``target``; done once ``name`` reads as a written tally
    (or the hand got there)."""

    def __init__(self, tally: Tally, name: str, target: np.ndarray):
        super().__init__(target, DOWN, CLOSE, tol=0.01, max_steps=200, max_speed=0.4, name=f"push {name}")
        self.tally, self.object = tally, name

    def step(self, scene: Scene) -> np.ndarray | None:
        if self.tally.offset(scene, self.object) > PUSH_MARGIN:
            return self.finish(True)
        return super().step(scene)


def _travel_to(offset: np.ndarray, d: np.ndarray, distance: float) -> float:
    """How far along unit ``d`` a point at ``offset`` from the centre moves to be ``distance`` from it."""
    b = float(offset @ d)
    c = float(offset @ offset) - distance**2
    return max(0.0, -b + float(np.sqrt(max(b * b - c, 0.0))))


def _in_reach(point: np.ndarray) -> bool:
    return REACH_X[0] <= point[0] <= REACH_X[1] and REACH_Y[0] <= point[1] <= REACH_Y[1]


ROBOT_BODIES = ("robot", "gripper", "mount")  # body name prefixes of the arm: never an obstacle
SUPPORT_BODIES = ("table", "world")  # the table and the floor the push runs over


def _geoms(scene: Scene) -> list[tuple[int, str]]:
    """(geom id, body name) of every colliding geom but the arm's and the table's."""
    model = scene.env.sim.model
    found = []
    for geom in range(model.ngeom):
        body = model.body_id2name(model.geom_bodyid[geom]) or ""
        if not (model.geom_contype[geom] or model.geom_conaffinity[geom]):
            continue
        if body in SUPPORT_BODIES or body.startswith(ROBOT_BODIES):
            continue
        found.append((geom, body))
    return found


def _radius(scene: Scene, name: str, d: np.ndarray) -> float:
    """How far the object reaches from its origin toward ``-d`` (xy, metres): where a push along
    ``d`` first meets it. Box geoms by their corners; any other geom by its bounding sphere."""
    model, data = scene.env.sim.model, scene.env.sim.data
    here = scene.pos(name)[:2]
    mine = [g for g, body in _geoms(scene) if body.startswith(name + "_")]
    if not mine:
        return 0.05
    reach = []
    for g in mine:
        back = float((here - scene.geom_pos(g)[:2]) @ d)  # the geom's centre behind the origin
        if model.geom_type[g] == BOX:
            axes = np.array(data.geom_xmat[g]).reshape(3, 3)[:2, :]  # columns: the box's axes, in xy
            reach.append(back + float(np.abs(axes.T @ d) @ model.geom_size[g]))
        else:
            reach.append(back + float(model.geom_rbound[g]))
    return max(reach)


def _obstacles(scene: Scene, name: str) -> list[tuple[np.ndarray, float, float]]:
    """(xy, radius, top z) of the bounding sphere of every colliding geom not of ``name``, the arm or the table."""
    model = scene.env.sim.model
    found = []
    for geom, body in _geoms(scene):
        if body.startswith(name + "_"):
            continue
        centre, r = scene.geom_pos(geom), float(model.geom_rbound[geom])
        found.append((centre[:2], r, float(centre[2] + r)))
    return found


def _clearance(a: np.ndarray, b: np.ndarray, circles: list[tuple[np.ndarray, float]]) -> float:
    """Least distance from the xy segment a-b to the edge of any circle (negative: it crosses one)."""
    ab = b - a
    length2 = float(ab @ ab) or 1e-12
    least = np.inf
    for centre, r in circles:
        t = min(1.0, max(0.0, float((centre - a) @ ab) / length2))
        least = min(least, float(np.linalg.norm(a + t * ab - centre)) - r)
    return least
