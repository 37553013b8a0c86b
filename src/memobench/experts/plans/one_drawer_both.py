"""One drawer, retrieve both (S09-S10): two items into the open drawer, shut it, then both to the plate.

The drawer is too small for two items side by side that the hand can both take
out again (measured: the palm only fits between the side walls at the drawer's
middle y, and the handle of the drawer above keeps it in the front 4 cm of the
drawer), so the second item is stacked on the first: ``bottom`` (B) goes in
first, ``top`` (A) is laid on it, and A comes out first. A task's plan module
subclasses :class:`OneDrawerBothPlan` and sets ``task_id``, ``top``, ``bottom``
and ``stack_height``. This module is not a plan module (no task prefix).

Memory: ``both_in`` - the drawer the two items went into, and ``stage``
("store", then "retrieve" once the drawer is shut over both). Once it is
shut, all drawers look alike: without memory the plan opens a drawer uniformly
among the three (right with probability 1/3), closes it again if it is empty,
and draws again. Opening the remembered (or guessed) drawer and taking A out
is one skill, so a drawer showing both items is never mistaken for one that
still has to be shut.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import DOWN, OPEN
from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.hide_and_retrieve import (
    PLATE,
    HiddenItem,
    Verify,
    drop_point,
    in_drawer,
    pick_from_drawer,
)
from memobench.experts.plans.two_drawers import HOME, LIFT
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, MoveTo, Rise, Skill, pick, place_at

B_RELEASE_EXTRA = 0.015  # release B this much higher over the plate: a finger pad passes over A


def plate_spot(offset: np.ndarray):
    def target(scene: Scene) -> np.ndarray:
        return scene.pos(PLATE) + offset

    return target


def serve(item: HiddenItem, offset: np.ndarray, extra: float = 0.0) -> Chain:
    """Carry the held item to its spot on the plate and let go."""
    return place_at(plate_spot(offset), release_height=item.plate_release + extra, carry_height=item.plate_carry)


class Fetch(Chain):
    """Take ``item`` out of the open drawer ``level`` and put it on its spot on the plate."""

    def __init__(self, item: HiddenItem, level: str, item_z: float, offset: np.ndarray, extra: float = 0.0):
        self.item, self.level = item, level
        super().__init__(
            [pick_from_drawer(item, level, item_z + 0.16), serve(item, offset, extra)], name=f"{item.name} to plate"
        )


class Deferred(Skill):
    """A skill built from the scene when it starts (``build(scene)``); fails at once if that gives None."""

    def __init__(self, build, name: str = "deferred"):
        super().__init__()
        self.build, self.inner, self.name = build, None, name
        self.max_steps = 1000

    def step(self, scene: Scene):
        if self.inner is None:
            self.inner = self.build(scene)
            if self.inner is None:
                return self.finish(False)
        action = self.inner.act(scene)
        if action is None:
            return self.finish(self.inner.succeeded)
        return action


class OneDrawerBothPlan(Plan):
    """Subclasses set ``task_id``, ``top`` (A), ``bottom`` (B), ``stack_height`` and the plate spots."""

    top: HiddenItem
    bottom: HiddenItem
    stack_height: float  # grip site over B's origin when A is let go on top of B
    top_spot = np.array([0.0, -0.024, 0.0])  # A's place on the plate (from its origin)
    bottom_spot = np.array([0.0, 0.026, 0.0])  # B's place: side by side with A, both < 3 cm off centre

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["stage"] = "store"  # the episode starts: nothing stored yet

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if "stage" not in memory:  # memoryless
            return
        level = getattr(finished, "level", None)
        if (
            isinstance(finished, CloseDrawer | StackAndClose)
            and is_closed(scene, level)
            and in_drawer(scene, self.top, level)
            and in_drawer(scene, self.bottom, level)
        ):
            memory["both_in"], memory["stage"] = level, "retrieve"

    # -- skills ----------------------------------------------------------------------------
    def store_bottom(self, level: str) -> Chain:
        b = self.bottom
        return Chain(
            [
                pick(b.name, b.grasp_height, lift=LIFT),
                place_at(drop_point(b, level), release_height=b.drawer_release, carry_height=0.12),
                Verify(lambda s: in_drawer(s, b, level), name=f"{b.name} in drawer"),
            ],
            name=f"store {b.name} in {level}",
        )

    def open_and_fetch(self, level: str) -> Chain:
        """Open ``level``; if A is in it, take A to the plate (else stop: the drawer is shown empty)."""
        a = self.top

        def fetch(scene: Scene):
            if not in_drawer(scene, a, level):
                return None
            return Fetch(a, level, float(scene.pos(a.name)[2]), self.top_spot)

        return Chain([OpenDrawer(level), Deferred(fetch, name=f"fetch {a.name}")], name=f"open {level} and fetch")

    def fetch_bottom(self, scene: Scene, level: str) -> Fetch:
        b = self.bottom
        return Fetch(b, level, float(scene.pos(b.name)[2]), self.bottom_spot, B_RELEASE_EXTRA)

    # -- decisions -------------------------------------------------------------------------
    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        a, b = self.top, self.bottom
        a_plated = scene.check("on", a.name, PLATE) and not scene.grasped(a.name)
        b_plated = scene.check("on", b.name, PLATE) and not scene.grasped(b.name)
        if a_plated and b_plated:
            return None
        stage = memory.get("stage")  # None: no memory
        opened = [level for level in LEVELS if not is_closed(scene, level)]
        a_in = [level for level in opened if in_drawer(scene, a, level)]
        b_in = [level for level in opened if in_drawer(scene, b, level)]
        if scene.grasped(a.name):
            if b_in and not a_plated and stage != "retrieve":
                if stage is None and self.choose(["stack", "serve"], rng) == "serve":
                    return serve(a, self.top_spot)  # the scene cannot tell storing from fetching
                return StackAndClose(self, b_in[0], pick_first=False)
            return serve(a, self.top_spot)
        if scene.grasped(b.name):
            if a_plated or not opened:
                return serve(b, self.bottom_spot, B_RELEASE_EXTRA)
            return Chain([place_at(drop_point(b, opened[0]), release_height=b.drawer_release)], name="drop bottom")
        if scene.hidden(a.name) or scene.hidden(b.name):
            if opened:  # an open drawer, and the items are not in it: close it again
                return CloseDrawer(opened[0])
            return self.open_and_fetch(memory.get("both_in") or self.choose(LEVELS, rng))
        if a_in and b_in:  # both in the open drawer: just stacked, or reopened to fetch
            if stage == "retrieve" or (stage is None and self.choose(["close", "fetch"], rng) == "fetch"):
                return Fetch(a, a_in[0], float(scene.pos(a.name)[2]), self.top_spot)
            return CloseDrawer(a_in[0], speed=a.close_speed)
        if b_in:  # B in the open drawer, A not in it
            if a_plated:
                return self.fetch_bottom(scene, b_in[0])
            return StackAndClose(self, b_in[0])
        if a_plated:  # B lies in view outside the drawer (dropped on the way)
            return Chain(
                [pick(b.name, b.grasp_height, lift=0.25), serve(b, self.bottom_spot, B_RELEASE_EXTRA)],
                name=f"{b.name} to plate",
            )
        if opened and not a_in:  # the start: both on the table, the drawer open for them
            return self.store_bottom(opened[0])
        if a_in:  # A went in without B under it: take it out again
            return Fetch(a, a_in[0], float(scene.pos(a.name)[2]), self.top_spot)
        return Chain([pick(a.name, a.grasp_height, lift=0.25), serve(a, self.top_spot)], name=f"{a.name} to plate")


class StackAndClose(Chain):
    """Pick A off the table (unless held), lay it on B in the open drawer ``level``, shut the drawer."""

    def __init__(self, plan: OneDrawerBothPlan, level: str, pick_first: bool = True):
        a, b = plan.top, plan.bottom
        self.level = level

        def on_b(scene: Scene) -> np.ndarray:
            return scene.pos(b.name)

        # back to the start pose first: straight from over the open top drawer to A, the palm
        # hit that drawer's side wall (measured)
        parts: list[Skill] = (
            [
                Rise(HOME[2], DOWN, OPEN, max_steps=60, name="rise"),
                MoveTo(HOME, DOWN, OPEN, tol=0.02, name="home"),
                pick(a.name, a.grasp_height, lift=LIFT),
            ]
            if pick_first
            else []
        )
        parts += [
            place_at(on_b, release_height=plan.stack_height, carry_height=0.12),
            Verify(lambda s: in_drawer(s, a, level) and in_drawer(s, b, level), name="both in drawer"),
            CloseDrawer(level, speed=a.close_speed),
        ]
        super().__init__(parts, name=f"stack {a.name} on {b.name} in {level}")
