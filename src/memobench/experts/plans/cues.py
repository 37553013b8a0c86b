"""Reading a pointing cue: which objects did the hand dwell over, in what order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memobench.experts.scene import Scene

POINTED_RADIUS = 0.03  # metres (xy) between the hovering hand and an object's origin


def pointed_objects(cue_states: Sequence[np.ndarray], candidates: Sequence[str], scene: Scene) -> list[str]:
    """Candidates the cue's hand hovered over, in the order it first came over them.

    ``cue_states`` are the robot states recorded during the cue (end-effector
    position first); the scene is the restored initial scene, so the objects
    are where they were when the cue pointed at them.
    """
    positions = {name: scene.pos(name)[:2] for name in candidates}
    order: list[str] = []
    for state in cue_states:
        hand = np.asarray(state[:2], dtype=float)
        for name, xy in positions.items():
            if name not in order and np.linalg.norm(hand - xy) < POINTED_RADIUS:
                order.append(name)
    return order
