"""The arena's objects on LIBERO's coffee table: measured sizes and grasps, per object class.

The kitchen-table constants (:data:`~memobench.experts.skills.TABLE_Z`, the bottles'
grasps) do not hold here: the table's top is read from the scene
(:meth:`~memobench.experts.scene.Scene.table_top`, 0.424), and the sizes below were
measured on the coffee-table scenes (collision boxes and resting contacts, yaw 0: every
pack lies long side along x, so the fingers, closing along world y, span its short side).
"""

from __future__ import annotations

from memobench.experts.bottles import kind

# Origin over the object's bottom (half its height, for the centred packs): butter 7.6 x 4.0 x
# 1.7 cm, cream cheese 8.1 x 4.3 x 1.8, chocolate pudding 8.0 x 4.6 x 2.7, cookies 8.3 x 6.2 x
# 1.9, popcorn 6.2 x 4.2 x 2.0; the tomato sauce jar is 7.6 cm tall, its origin 3.8 cm up.
HALF_HEIGHT = {
    "butter": 0.0085,
    "cream_cheese": 0.009,
    "chocolate_pudding": 0.013,
    "cookies": 0.0095,
    "popcorn": 0.010,
    "tomato_sauce": 0.038,
}
# Grip-site height over the origin when closing the fingers: the packs at their centre (as in
# S01-S05), the tomato sauce at mid-height (as in T09).
GRASP_HEIGHT = {
    "butter": -0.002,
    "cream_cheese": -0.002,
    "chocolate_pudding": -0.002,
    "cookies": -0.002,
    "popcorn": -0.002,
    "tomato_sauce": 0.012,
}
PLATE_TOP = 0.0076  # a plate's top over its origin (butter-plate contact 0.4336, plate origin 0.426)
BASKET_RIM = 0.146  # the basket's wall tops over its origin (walls to 0.565, origin 0.419)


def half_height(name: str) -> float:
    """:data:`HALF_HEIGHT` of an instance (``butter_1``)."""
    return HALF_HEIGHT[kind(name)]


def grasp_height(name: str) -> float:
    """:data:`GRASP_HEIGHT` of an instance (``butter_1``)."""
    return GRASP_HEIGHT[kind(name)]


# The milk and orange-juice cartons standing upright (LIBERO's resting orientation, as the env
# sets them on a cabinet's top in A19): 5.3 x 5.3 x 13.1 cm, the origin 7.0 cm over the bottom
# (measured: resting contact 0.664, origin 0.7337). Grasped from above across a side (5.3 cm,
# the gripper opens to 8), the grip site 3 cm over the origin: 3 cm under the top's corners.
HALF_HEIGHT.update({"milk": 0.070, "orange_juice": 0.070})
GRASP_HEIGHT.update({"milk": 0.03, "orange_juice": 0.03})
