"""P01 assembly: put the cued item in the black bowl, then the bowl (item inside) on the plate.

Memory: ``item`` - the pack the cue's demonstration put in the bowl (yellow
or green butter; it then carried the bowl onto the plate, the routine's fixed
part). Without it the plan cannot tell which pack the routine uses while the
bowl is empty, and guesses uniformly between the two; once a pack lies in
the bowl the scene shows it, and the rest (bowl onto plate) follows.
Chance 1/2.

Only butter-sized packs (7.6 cm) fit: cream cheese (8.1 cm) and chocolate
pudding (8.0 cm) wedged high against the wall (origin ~4.7 cm over the bowl's
bottom) and the rim grasp then closed on them (measured, 0/3 and 0/1).
The pack is let go with the fingers just above the rim, steered by its own
origin (hand offset read live). The bowl is then
taken by its rim (P04's grasp) on the wall away from the item, so the inner
finger does not hit it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.experts.bowl_carry import bowl_rot, pick_bowl_from, room_side, set_down
from memobench.experts.control import DOWN
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import moves
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

ITEMS = ("butter_1", "green_butter_1")
BOWL, PLATE = "akita_black_bowl_1", "plate_1"
GRASP_HEIGHT = -0.002  # grip site at the pack's origin (its centre; 1.7 cm tall), as in S01
# Item origin over the bowl's origin when letting go. The fingers stay above the rim (5.2 cm):
# open fingers lowered into the bowl touch its walls, and rising they carried the bowl away.
# The item drops ~4 cm onto the floor and stays in.
IN_BOWL = 0.068
ITEM_LIFT = 0.18  # hand over the table after picking an item: it clears the bowl's rim
BOWL_ON_PLATE = 0.025  # bowl origin (its bottom) over the plate's origin when letting go


def _in_bowl(scene: Scene, item: str) -> bool:
    return scene.check("on", item, BOWL) and not scene.grasped(item)


class AssemblyPlan(Plan):
    task_id = "P01-assembly"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        put_in_bowl = [item for item, _ in moves(cue_states, ITEMS, [BOWL], scene)]
        if put_in_bowl:
            memory["item"] = put_in_bowl[0]

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        memory["item"] = binding["item"]["target"]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        inside = [i for i in ITEMS if _in_bowl(scene, i)]
        held = [o for o in (BOWL, *ITEMS) if scene.grasped(o)]
        if inside and scene.check("on", BOWL, PLATE) and not held:
            return None  # an item in the bowl, the bowl on the plate: as far as the scene tells, done
        if BOWL in held:
            return set_down(BOWL, lambda s: s.pos(PLATE) + np.array([0.0, 0.0, BOWL_ON_PLATE]), bowl_rot(scene, BOWL))
        if held:  # an item in the hand: it goes in the bowl
            item = held[0]
            return set_down(item, lambda s: s.pos(BOWL) + np.array([0.0, 0.0, IN_BOWL]), DOWN)
        if inside:
            return pick_bowl_from(BOWL, room_side(scene, BOWL, inside[0]))
        item = memory.get("item") or self.choose(ITEMS, rng)
        return pick(item, GRASP_HEIGHT, lift=ITEM_LIFT)
