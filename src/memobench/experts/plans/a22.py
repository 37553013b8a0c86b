"""A22 pour tomato cookies microwave: pour the tomato sauce over the cookies twice, set it aside,
then open the microwave and put the cookies in.

Memory: ``pours`` - the pours done so far (one more each time a pour skill succeeds), as in
T09. Nothing in the scene shows it: after any pour the bottle is back near-upright in the
hand over the cookies.

Decisions, from the scene (the same for the expert and the memoryless one):

- bottle held, away from the cookies (just picked): pour;
- bottle held over the cookies (after a pour): pour again or set it aside. With memory: pour
  again while fewer than two pours are done. Without: a uniform guess (the reactive expert
  pours again, what the upright bottle over the cookies invites);
- bottle standing at the set-aside spot: the pouring is over; the rest is
  :mod:`~memobench.experts.plans.arena_microwave`'s, in view (cookies in the hand: in they go;
  door not open: open it; cookies not inside: pick them up; inside: done);
- bottle standing anywhere else (the start, a missed grasp): pick it up.

So the memoryless expert guesses exactly twice on its way to success (after the first pour:
"again"; after the second: "set aside"), chance 1/4. Setting the bottle aside after one pour
leaves the second pour undone for good (the set-aside bottle says the pouring is over); a
third pour fails with ``extra_pour``.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.coffee_table import grasp_height, half_height
from memobench.experts.control import DOWN, OPEN, rot_z
from memobench.experts.expert import Memory, Plan
from memobench.experts.microwave import is_open
from memobench.experts.plans.arena_microwave import inside, open_wide, put_inside
from memobench.experts.pouring import Pour, pour_spot
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, Skill, pick

BOTTLE, COOKIES = "tomato_sauce_1", "cookies_1"
ASIDE = "coffee_table_set_aside_region"
POURS = 2
LIFT = 0.15  # hand over the table's top after picking the bottle or the cookies
# The bottle is grasped with the fingers closing along x (the hand turned a quarter about the
# vertical): with them along y the palm, 10 cm to either side of them, hit the shut microwave's
# door over the bottle's start (seen). It pours by turning about world y (across the fingers),
# the top toward +x, from the cookies' -x side.
BOTTLE_HAND = rot_z(-np.pi / 2) @ DOWN
POUR_AXIS = np.array([0.0, 1.0, 0.0])
POUR_OFFSET = np.array([-0.045, 0.0, 0.18])  # hand relative to the cookies' origin while pouring
TURN_BACK_STEPS = 30  # steps to turn the empty hand back to DOWN after setting the bottle aside
OVER_COOKIES = 0.06  # m, xy: the held bottle is "at the cookies" within this of the pour spot
SET_DOWN_MARGIN = 0.005  # the bottle's bottom over the table when letting go
RETREAT = 0.30  # hand over the table's top after setting the bottle aside
ASIDE_RADIUS = 0.05  # m, xy: a bottle standing this near the set-aside spot was set aside


def set_aside_point(scene: Scene) -> np.ndarray:
    """Where the bottle's origin goes: over the set-aside spot, its bottom just over the table."""
    spot = scene.pos(ASIDE)
    return np.array([spot[0], spot[1], scene.table_top() + half_height(BOTTLE) + SET_DOWN_MARGIN])


def set_aside(scene: Scene) -> bool:
    """True when the bottle stands at the set-aside spot, out of the hand."""
    near = np.linalg.norm(scene.pos(BOTTLE)[:2] - scene.pos(ASIDE)[:2]) < ASIDE_RADIUS
    return bool(near) and not scene.grasped(BOTTLE)


def pour() -> Pour:
    """One pour of the held bottle over the cookies (see :data:`BOTTLE_HAND`)."""
    return Pour(BOTTLE, COOKIES, offset=POUR_OFFSET, hand=BOTTLE_HAND, axis=POUR_AXIS)


def put_aside(scene: Scene) -> Skill:
    """Set the held bottle down at the set-aside spot; then, held still, the hand turns back to
    pointing down with the fingers along y: turning while travelling to the microwave's handle
    ran the wrist into its limit (seen)."""
    return Chain(
        [
            set_down(BOTTLE, set_aside_point, BOTTLE_HAND, retreat_z=scene.table_top() + RETREAT),
            Grip(OPEN, steps=TURN_BACK_STEPS, rot=DOWN, name="turn back"),
        ],
        name=f"set {BOTTLE} aside",
    )


class PourCookiesMicrowavePlan(Plan):
    task_id = "A22-pour-tomato-cookies-microwave"

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, Pour) and finished.succeeded:
            memory["pours"] = memory.get("pours", 0) + 1

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        if scene.grasped(BOTTLE):
            spot = pour_spot(COOKIES, POUR_OFFSET)(scene)
            at_cookies = np.linalg.norm(scene.pos(BOTTLE)[:2] - spot[:2]) < OVER_COOKIES
            if not at_cookies:
                return pour()
            if "pours" in memory:
                again = memory["pours"] < POURS
            else:  # memoryless: the scene looks the same after every pour
                again = self.choose((True, False), rng)
            return pour() if again else put_aside(scene)
        if set_aside(scene):
            if scene.grasped(COOKIES):
                return put_inside(COOKIES, 0, table)
            if not is_open(scene):
                return open_wide(scene)
            if inside(scene, COOKIES):
                return None  # the cookies are in the microwave: done, as the scene shows
            return pick(COOKIES, grasp_height(COOKIES), lift=LIFT, table_z=table)
        memory.setdefault("pours", 0)  # the expert starts counting; the memoryless one forgets it
        return pick(BOTTLE, grasp_height(BOTTLE), lift=LIFT, rot=BOTTLE_HAND, table_z=table)
