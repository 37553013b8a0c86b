"""P05 buffered swap: swap the bottles on the left and right plates through the middle plate.

Memory: ``first`` - the bottle the cue's demonstration moved first, onto the
middle plate (the green-label barbecue sauce on the left plate or the
red-label one on the right). With both bottles on their side plates the scene
does not tell which one moves first, and without memory the plan guesses
(1/2); after the first move the middle plate holds a bottle and one side
plate is empty, and the rest is forced: the other bottle onto the empty side
plate, then the parked one onto the other side plate. Chance 1/2.

The starting plates are fixed by the layout (green label left, red label
right), so which moves are done is in view: no memory is needed after the
first move.

Each move is one skill: pick from above, carry, stand on the plate, let go,
centre the open hand on the bottle, rise. The centring fixes the draft's
failures (3/10, all on the first move of the orange juice carton that then
stood on the left plate): letting go, the carton slid ~1.3 cm along the
fingers' axis against the +y finger and the retreating open hand dragged it up
off the middle plate (measured: it rose with the hand to 1.5 m and fell on the
table past the right plate), so the first checkpoint never held.
``skills.place_at`` centres for the same reason (milk cartons); the bottles'
``set_down`` does not, so the plan builds its own chain from its parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.experts.bottles import GRASP, HALF, LIFT, STAND_MARGIN, kind
from memobench.experts.bowl_carry import set_down
from memobench.experts.control import DOWN, OPEN
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import moves
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, MoveTo, Skill, pick

BOTTLES = ("green_bbq_sauce_1", "bbq_sauce_1")
SIDES, MIDDLE = ("plate_1", "plate_3"), "plate_2"
PLATE_TOP = 0.016  # plate's top over its origin
# Carried bottles pass over the middle plate and the parked bottle. The bottle's
# origin is kept CARRY over its release point, its bottom ~16 cm over the plates, over
# a parked sauce bottle (10.7 cm). In the draft, at the default 6 cm, a carried bottle
# knocked the parked one over; at 0.15 none did (10/10 here, see the task's comments).
CARRY = 0.15
SHAPE = {"green_bbq_sauce": "bbq_sauce", "bbq_sauce": "bbq_sauce"}  # the green bottle: the sauce's model, retextured

HOME = {"green_bbq_sauce_1": "plate_1", "bbq_sauce_1": "plate_3"}  # starting plates (task.bddl)


def _other(bottle: str) -> str:
    return next(b for b in BOTTLES if b != bottle)


def stand(bottle: str, support: str, *, held: bool = False) -> Chain:
    """(Pick and) stand ``bottle`` on the plate ``support``; after letting go, centre the hand on it."""
    shape = SHAPE[kind(bottle)]

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(support) + np.array([0.0, 0.0, PLATE_TOP + STAND_MARGIN + HALF[shape]])

    def centred(scene: Scene) -> np.ndarray:
        return np.array([*scene.pos(bottle)[:2], scene.eef_pos()[2]])

    down = set_down(bottle, goal, DOWN, carry=CARRY)
    *to_release, retreat = down.parts
    centre = MoveTo(centred, DOWN, OPEN, tol=0.003, max_steps=20, max_speed=0.3, name="centre")
    parts: list[Skill] = [] if held else [pick(bottle, GRASP[shape], lift=LIFT)]
    parts.append(Chain([*to_release, centre, retreat], name=f"set down {bottle}"))
    return Chain(parts, name=f"{bottle} on {support}")


class BufferedSwapPlan(Plan):
    task_id = "P05-buffered-swap"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        parked = [bottle for bottle, _ in moves(cue_states, BOTTLES, [MIDDLE], scene)]
        if parked:
            memory["first"] = parked[0]

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        memory["first"] = binding["order"]["first"]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        def on(b: str, p: str) -> bool:
            return scene.check("on", b, p) and not scene.grasped(b)

        def destination(b: str) -> str:
            """Where ``b`` goes next: the middle while the other is still at home, else the other's home."""
            return MIDDLE if on(_other(b), HOME[_other(b)]) else HOME[_other(b)]

        held = [b for b in BOTTLES if scene.grasped(b)]
        if held:
            return stand(held[0], destination(held[0]), held=True)
        if all(on(b, HOME[_other(b)]) for b in BOTTLES):
            return None  # swapped
        if all(on(b, HOME[b]) for b in BOTTLES):
            first = memory.get("first") or self.choose(BOTTLES, rng)
            return stand(first, MIDDLE)
        parked = [b for b in BOTTLES if on(b, MIDDLE)]
        if parked:
            p = parked[0]
            q = _other(p)
            if on(q, HOME[p]):  # the other already crossed: the parked one goes to the other's home
                return stand(p, HOME[q])
            return stand(q, HOME[p])  # the other, at home or dropped, crosses to the plate p left
        # a bottle off the plates (dropped): put it where it goes next
        loose = [b for b in BOTTLES if not any(on(b, q) for q in (*SIDES, MIDDLE))]
        return stand(loose[0], destination(loose[0])) if loose else None
