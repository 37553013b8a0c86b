"""Reading a pointing cue: which objects did the hand stop over, in what order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memobench.experts.scene import Scene

POINTED_RADIUS = 0.03  # metres (xy) between the hovering hand and an object's origin
DWELL_SPEED = 0.004  # metres between recorded cue states (2 steps apart) while the hand hovers


def pointed_objects(cue_states: Sequence[np.ndarray], candidates: Sequence[str], scene: Scene) -> list[str]:
    """Candidates the cue's hand stopped over, in the order it first stopped over them.

    ``cue_states`` are the robot states recorded during the cue (end-effector
    position first); the scene is the restored initial scene, so the objects
    are where they were when the cue pointed at them. Only states where the
    hand hovers (hardly moves) count: on its way from one end of a row of
    objects to the other the hand passes over the middle one without pointing
    at it (counting passes misread 12 of 40 P04 cues).
    """
    positions = {name: scene.pos(name)[:2] for name in candidates}
    order: list[str] = []
    previous = None
    for state in cue_states:
        hand = np.asarray(state[:3], dtype=float)
        hovering = previous is not None and np.linalg.norm(hand - previous) < DWELL_SPEED
        previous = hand
        if not hovering:
            continue
        for name, xy in positions.items():
            if name not in order and np.linalg.norm(hand[:2] - xy) < POINTED_RADIUS:
                order.append(name)
    return order
