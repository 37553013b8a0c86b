"""T02 check middle drawer, then bowl: open and close the middle drawer, then put the black bowl on the plate.

Memory: ``checked`` - whether the middle drawer has been opened and closed
again (``opened`` marks that it was seen open). After the check the cabinet
looks exactly as before it, so without memory the plan cannot tell whether the
check is still due: with the drawers shut and the bowl off the plate it picks
uniformly between checking (again) and moving the bowl. A bowl on the plate
ends the plan (the scene then looks done); an open drawer always gets closed.

The bowl (akita rim ~10.8 cm across, wider than the open fingers) is grasped by
its rim with the P04 geometry (:mod:`memobench.experts.plans.p04`): one finger
inside, one outside the wall on the bowl's -y side (toward the cabinet, away
from the plate), hand tilted to the wall's lean.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import pick_bowl_from, place_held_bowl
from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed
from memobench.experts.expert import Memory
from memobench.experts.plans.t01 import DrawerCheckPlan
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Skill

LEVEL = "middle"
BOWL, PLATE = "akita_black_bowl_1", "plate_1"
SIDE = -1.0  # grasp the wall on the bowl's -y side: the hand stays between cabinet and plate
ON_PLATE = 0.012  # let go with the bowl's origin this far over the plate's (measured: rests at ~0.005)
CARRY = 0.10  # the held bowl's origin this far over the plate's while carrying over it


def pick_bowl() -> Chain:
    """Grasp the bowl by its rim on the ``SIDE`` wall and lift it."""
    return pick_bowl_from(BOWL, SIDE)


def place_bowl_on_plate() -> Chain:
    """Carry the held bowl over the plate (steered by the bowl's own origin), lower it, let go."""

    def goal(s: Scene, extra: float) -> np.ndarray:
        return s.pos(PLATE) + np.array([0.0, 0.0, ON_PLATE + extra])

    return place_held_bowl(BOWL, SIDE, goal, carry=CARRY, name="bowl on plate")


class CheckMiddleDrawerThenBowlPlan(DrawerCheckPlan):
    task_id = "T02-check-middle-drawer-then-bowl"
    level = LEVEL

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held = scene.grasped(BOWL)
        if scene.check("on", BOWL, PLATE) and not held:
            return None  # the bowl is served: the scene looks done
        ajar = [level for level in LEVELS if not is_closed(scene, level)]
        if ajar and not held:  # a drawer stands open (the scene shows it): close it
            return CloseDrawer(ajar[0])
        if held:
            return place_bowl_on_plate()
        if self.check_done(memory, rng):
            return Chain([pick_bowl(), place_bowl_on_plate()], name="bowl to plate")
        return OpenDrawer(LEVEL)
