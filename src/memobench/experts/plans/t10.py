"""T10 pour twice, mug then tray: pour the wine into the mug exactly twice, then put the bottle on the tray.

Memory: ``pours`` - the pours done so far, as in T09 (nothing in the scene
shows it: after any pour the bottle is back near-upright in the hand over the
mug).

Decisions, from the scene (the same for the expert and the memoryless one):

- bottle standing on the tray, released: done (the last step is visibly done);
- bottle not in the hand anywhere else (on the table at the start, or after a
  missed grasp): pick it up;
- bottle held, away from the mug (just picked): pour;
- bottle held over the mug (after a pour): pour again or take it to the tray.
  With memory: pour again while fewer than two pours are done. Without: a
  uniform guess, as in T09.

So the memoryless expert guesses twice on its way to success ("again" after
the first pour, "to the tray" after the second): chance 1/4. Taking the
bottle to the tray after one pour ends its plan with one pour; a third pour
fails the episode with ``extra_pour``.

The wine bottle (15.8 cm tall, origin at its base) is held by its neck, so
everything happens higher than with T09's sauce bottle: the pour spot is
26 cm over the mug's base (the bottle's base clears the 10.8 cm rim by ~2 cm),
and it is carried with its base above the tray's 8 cm walls.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.pouring import Pour, pour_spot
from memobench.experts.scene import Scene
from memobench.experts.side_grasp import approach, side_pick, side_rot, side_set_down
from memobench.experts.skills import Skill

BOTTLE, MUG, TRAY = "wine_bottle_1", "porcelain_mug_1", "wooden_tray_1"
POURS = 2
GRASP_HEIGHT = 0.052  # grip site over the bottle's base: pads on the body, just under its centre of mass (0.056)
YAW = np.radians(45.0)  # the hand points to +x+y, coming from the robot's side of the bottle
LIFT = 0.25  # hand over the table after the grasp
# Hand relative to the mug's origin while pouring.
POUR_AT = np.array([-0.043, 0.031, 0.22])
OVER_MUG = 0.06  # m, xy: the held bottle is "at the mug" within this of the pour spot
CARRY = 0.20  # hand over the table while carrying the bottle to the tray
RELEASE_OVER_TRAY = 0.10  # grip site over the tray's origin when letting go: the hand clears the walls


def tray_spot(scene: Scene) -> np.ndarray:
    """The table point under which the hand goes so the bottle's base lands on the tray's origin.

    Steered by the bottle itself (hand minus bottle, read live): LIBERO's ``on`` needs the
    bottle within 3 cm (xy) of the tray's origin."""
    return scene.pos(TRAY) + (scene.eef_pos() - scene.pos(BOTTLE)) * np.array([1.0, 1.0, 0.0])


def to_tray(scene: Scene) -> Skill:
    """Carry the held bottle over the tray, let it go upright just over the tray's floor."""
    return side_set_down(BOTTLE, tray_spot, YAW, release_z=lambda sc: sc.pos(TRAY)[2] + RELEASE_OVER_TRAY,
                         carry_height=CARRY)


def pour() -> Pour:
    return Pour(BOTTLE, MUG, offset=POUR_AT, hand=side_rot(YAW), axis=approach(YAW))


class PourTwiceMugThenTrayPlan(Plan):
    task_id = "T10-pour-twice-mug-then-tray"

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, Pour) and finished.succeeded:
            memory["pours"] = memory.get("pours", 0) + 1

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if scene.grasped(BOTTLE):
            spot = pour_spot(MUG, POUR_AT)(scene)
            if np.linalg.norm(scene.eef_pos()[:2] - spot[:2]) >= OVER_MUG:
                return pour()
            if "pours" in memory:
                again = memory["pours"] < POURS
            else:  # memoryless: the scene looks the same after every pour
                again = self.choose((True, False), rng)
            return pour() if again else to_tray(scene)
        if scene.check("on", BOTTLE, TRAY):
            return None  # the bottle stands on the tray: the last step is done
        memory.setdefault("pours", 0)  # the expert starts counting; the memoryless one forgets it
        return side_pick(BOTTLE, GRASP_HEIGHT, YAW, lift=LIFT)
