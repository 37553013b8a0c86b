"""T05 microwave then bowl: open and close the microwave, then put the white bowl on the plate.

Memory: ``opened`` / ``checked`` as in T04 (the microwave check). After the
check the microwave looks as it did at the start, so the scene cannot say
whether it is time for the bowl.

Decisions, from the scene (the same for the expert and the memoryless one):

- the door is not shut: close it;
- the bowl is in the hand: put it on the plate;
- the bowl rests on the plate: done (the last step is visibly done);
- the door is shut and the bowl on the table: with memory, check the
  microwave unless that is done, else fetch the bowl. Without memory both are
  consistent with the scene: a uniform pick.

The bowl is too wide for the open fingers (rim ~8 cm), so it is held by its
rim wall, with P04's grasp (hand tilted to the wall's lean, one finger inside).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import LIFT_Z, grasp_rot, wall_grip
from memobench.experts.control import CLOSE, OPEN
from memobench.experts.expert import Memory
from memobench.experts.microwave import CloseMicrowave, OpenMicrowave, is_closed
from memobench.experts.plans.t04 import MicrowaveCheckPlan
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, MoveTo, Rise, Skill

BOWL, PLATE = "white_bowl_1", "plate_1"
SIDE = 1.0  # grasp the bowl by its +y wall: the hand (20 cm along y) then stays clear of the microwave
RELEASE = 0.03  # bowl origin over the plate's origin when letting go (it rests at ~0.013)
CARRY = 0.10  # ... and this much higher while carrying it over
# Come to the bowl high, then straight down: a hand going straight from the microwave to the
# bowl passed low in front of the door and dragged it ajar (palm on the panel), seen twice.
HIGH_Z = 1.18


def pick_bowl() -> Chain:
    """Grasp the white bowl by its rim wall on the ``SIDE`` side and lift it."""
    site, up = wall_grip(BOWL, SIDE)
    rot = grasp_rot(BOWL, SIDE)

    def at(back: float):
        return lambda s: s.pos(BOWL) + site + back * up

    def high(s: Scene) -> np.ndarray:
        return np.array([*at(0.09)(s)[:2], HIGH_Z])

    return Chain(
        [
            MoveTo(high, rot, OPEN, tol=0.02, name="high"),
            MoveTo(at(0.09), rot, OPEN, tol=0.01, name="over"),
            MoveTo(at(0.0), rot, OPEN, tol=0.005, max_speed=0.5, name="descend"),
            Grip(CLOSE, rot=rot, name="close"),
            Rise(LIFT_Z, rot, CLOSE, name="lift"),
        ],
        name=f"pick {BOWL}",
    )


def place_bowl() -> Chain:
    """Carry the held bowl over the plate (steered by the bowl's own origin), lower it, let go."""
    rot = grasp_rot(BOWL, SIDE)

    def hand_for(height: float):
        def goal(s: Scene) -> np.ndarray:
            return s.pos(PLATE) + np.array([0.0, 0.0, height]) + (s.eef_pos() - s.pos(BOWL))

        return goal

    return Chain(
        [
            MoveTo(hand_for(RELEASE + CARRY), rot, CLOSE, tol=0.012, name="carry"),
            MoveTo(hand_for(RELEASE), rot, CLOSE, tol=0.006, max_speed=0.5, name="lower"),
            Grip(OPEN, rot=rot, name="release"),
            Rise(LIFT_Z, rot, OPEN, name="retreat"),
        ],
        name=f"place {BOWL} on {PLATE}",
    )


class MicrowaveThenBowlPlan(MicrowaveCheckPlan):
    task_id = "T05-microwave-then-bowl"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if not is_closed(scene):  # the door stands open (the scene shows it): close it
            return CloseMicrowave()
        if scene.grasped(BOWL):
            return place_bowl()
        if scene.check("on", BOWL, PLATE):
            return None  # the bowl is on the plate: the last step is done
        return pick_bowl() if self.check_done(memory, rng) else OpenMicrowave()
