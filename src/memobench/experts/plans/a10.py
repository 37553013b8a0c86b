"""A10 pour wine bottle into mug: pour the wine over the white and yellow mug twice, then stand it back.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). RoboMemArena's own model reads the task as "pour wine into white yellow mug twice"; the
task's goal has the bottle back on its start region, the hand parked after. Chance 1/4:
after each pour the bottle is back upright in the hand over the mug, whatever the count.

The wine bottle (15.8 cm tall, origin at its base) is held from the side by its body, as in
T10 (:mod:`~memobench.experts.side_grasp`; held from above by its narrow neck it turns in the
fingers, and a swing near the mug counts as a pour): the hand level, turned 45-75 degrees
from +x toward +y (the first yaw that keeps clear of the mug and the tray), pouring and
carrying at 45 degrees, a roll of the wrist about the direction the hand points.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN
from memobench.experts.expert import Memory
from memobench.experts.plans.arena_pour import PARK, RETREAT, ArenaPourPlan, SettledPour
from memobench.experts.pouring import POUR_TILT, hand_rot
from memobench.experts.scene import Scene
from memobench.experts.side_grasp import approach, clearest_yaw, side_pick, side_rot
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

BOTTLE, MUG, TRAY = "wine_bottle_1", "white_yellow_mug_1", "wooden_tray_1"
START = "coffee_table_wine_bottle_init_region"
# As T10: the pads on the body's flat slats just under the centre of mass; the yaws, preferred
# first; the carry tilt (moving fast, the held bottle overshoots the hand's by up to 0.05 rad).
GRASP_HEIGHT = 0.052
GRASP_YAWS = np.radians([45.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0])
YAW_CLEARANCE = 0.01
POUR_YAW = np.radians(45.0)
CARRY_TILT = 0.05
LIFT = 0.15  # hand over the table's top after the grasp
MOUTH = 0.108  # the bottle's mouth over the grip site, along its axis
# Grip over the mug's base while pouring: the mug is 10.3 cm tall; the rolled hand's lower edge
# dips ~8 cm under the grip, and lags another ~4 cm while turning fast (T10: 25 cm over an
# 8 cm mug).
POUR_Z = 0.27
CARRY = 0.16  # hand over the table's top while carrying the bottle back
# No settling after a pour (arena_pour.SETTLE): the roll of the side grasp is slower, and settled
# the pours came 35 steps apart, so a reactive third pour completed after the 30-step extra-pour
# monitor had ended the episode (10 of 10 passed); unsettled they come 27 steps apart.


def pour_at(yaw: float) -> np.ndarray:
    """The hand relative to the mug's origin while pouring at ``yaw``: the roll tips the bottle's
    top toward ``approach(yaw) x up``, its mouth ``MOUTH * sin(POUR_TILT)`` that way, over the cup."""
    tip = np.cross(approach(yaw), [0.0, 0.0, 1.0])
    return np.array([0.0, 0.0, POUR_Z]) - MOUTH * np.sin(POUR_TILT) * tip


class PourWineBottleIntoMugPlan(ArenaPourPlan):
    task_id = "A10-pour-wine-bottle-into-mug"
    bottle = BOTTLE
    target = MUG
    after = "start"

    def grasp(self, scene: Scene) -> Skill:
        yaw = clearest_yaw(scene, BOTTLE, GRASP_HEIGHT, (MUG, TRAY), GRASP_YAWS, YAW_CLEARANCE)
        # side_pick lifts to a height over the kitchen table's top: shifted to the coffee table's
        return side_pick(BOTTLE, GRASP_HEIGHT, yaw, lift=scene.table_top() + LIFT - TABLE_Z)

    def pour_offset(self, scene: Scene) -> np.ndarray:
        return pour_at(POUR_YAW)

    def pour_xy(self) -> np.ndarray:
        return pour_at(POUR_YAW)[:2]

    def pour(self, scene: Scene, memory: Memory) -> SettledPour:
        rot, axis = side_rot(POUR_YAW), approach(POUR_YAW)
        return SettledPour(BOTTLE, MUG, offset=pour_at(POUR_YAW), hand=rot, axis=axis, carry=CARRY_TILT, settle=0)

    def put_away(self, scene: Scene) -> Skill:
        """Carry the bottle over its start region, stand it upright, set it down there, let go, park."""
        table, rot = scene.table_top(), side_rot(POUR_YAW)

        def at(z: float):
            def target(s: Scene) -> np.ndarray:
                # steered by the bottle: the hand goes where the bottle's base lands on the region
                spot = s.pos(START) + s.eef_pos() - s.pos(BOTTLE)
                return np.array([spot[0], spot[1], table + z])

            return target

        return Chain(
            [
                MoveTo(at(CARRY), hand_rot(CARRY_TILT, rot, approach(POUR_YAW)), CLOSE, tol=0.012, name="carry"),
                MoveTo(at(CARRY), rot, CLOSE, tol=0.012, max_steps=60, name="upright"),
                MoveTo(at(GRASP_HEIGHT + 0.005), rot, CLOSE, tol=0.006, max_speed=0.5, max_steps=120, name="lower"),
                Grip(OPEN, steps=12, rot=rot, name="release"),
                Rise(table + RETREAT, rot, OPEN, name="retreat"),
                MoveTo(PARK + [0.0, 0.0, table], DOWN, OPEN, tol=0.015, name="park"),
            ],
            name=f"put {BOTTLE} back",
        )
