"""Sauce bottles and cartons: grasp from above, stand on a support, or drop into a container.

Bottles are picked from above, fingers closing along world y across their
3.7-5.6 cm width; the palm stops the descent ~3.2 cm below a bottle's top
(measured), which fixes the grasp height. Held bottles are steered by their
own origin (hand offset read live, :func:`bowl_carry.set_down`).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.control import DOWN
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, pick

# Per class: grip-site height over the origin when grasping; origin height over the bottom.
# Measured sizes: ketchup 3.7 x 5.6 x 14.6 cm, bbq sauce 2.9 x 4.7 x 10.7, orange juice 5.3 x 5.3 x 13.1.
GRASP = {"ketchup": 0.042, "bbq_sauce": 0.022, "orange_juice": 0.030}
HALF = {"ketchup": 0.072, "bbq_sauce": 0.055, "orange_juice": 0.070}
LIFT = 0.30  # hand over the table after the grasp: a held ketchup's bottom ~19 cm up
STAND_MARGIN = 0.008  # bottle's bottom over the support's top when letting go
DROP_CLEARANCE = 0.03  # bottle's bottom over a container's rim while carried over it
DROP_HEIGHT = 0.04  # bottle's bottom over a container's floor when letting go


def kind(name: str) -> str:
    """Object class of an instance name (``ketchup_1`` -> ``ketchup``)."""
    return name.rsplit("_", 1)[0]


def _pick(bottle: str) -> Chain:
    return pick(bottle, GRASP[kind(bottle)], lift=LIFT)


def stand_on(
    bottle: str, support: str, top: float, *, held: bool = False, carry: float = 0.06, margin: float = STAND_MARGIN
) -> Chain:
    """(Pick and) stand ``bottle`` upright on ``support``, whose top is ``top`` over its origin.

    ``carry``: the bottle's origin this much above its release point while carried over;
    ``margin``: its bottom this much over the support's top when let go (0 or less: set down
    until it touches, the descent stalling there).
    """

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(support) + np.array([0.0, 0.0, top + margin + HALF[kind(bottle)]])

    parts = [] if held else [_pick(bottle)]
    return Chain(parts + [set_down(bottle, goal, DOWN, carry=carry)], name=f"{bottle} on {support}")


def drop_into(bottle: str, container: str, rim: float, floor: float, *, held: bool = False) -> Chain:
    """(Pick and) carry ``bottle`` over ``container``'s rim (``rim`` over its origin), lower it into
    it and let go :data:`DROP_HEIGHT` over its floor (``floor`` over its origin).

    Let go over the rim instead, a bottle fell ~15 cm and once came to rest leaning on the
    container's wall (P03's slow expert), where ``on(bottle, container)`` does not hold.
    """

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(container) + np.array([0.0, 0.0, floor + DROP_HEIGHT + HALF[kind(bottle)]])

    carry = rim + DROP_CLEARANCE - floor - DROP_HEIGHT  # the bottom clears the rim while carried
    parts = [] if held else [_pick(bottle)]
    return Chain(
        parts + [set_down(bottle, goal, DOWN, carry=carry, retreat_z=TABLE_Z + LIFT)],
        name=f"{bottle} into {container}",
    )
