"""The flat stove's knob: grip its fin from above and turn it on or off.

The knob is a disk on a vertical hinge (``<stove>_button``, range [-0.005, 2.1]
rad) with a fin along its top; LIBERO calls the stove on at q >= 0.5 and off
at q < 0 (strictly), so the reset value q = 0 is neither (measured). The
skill pinches the fin with the hand pointing down, fingers across the fin, and
yaws the wrist, closing the loop on the joint reading: every step it aims the
hand's yaw a fixed lead past the knob's current angle (the knob lags the
wrist), stops on the reading, holds a few steps at the goal, and lets go.
Skills act only through actions; they read the simulator, never write it.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, pose_action, rot_z, rotation_error
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill

STOVE = "flat_stove_1"
ON_AT = 0.5  # LIBERO: on at q >= 0.5
OFF_BELOW = 0.0  # LIBERO: off at q < 0.0 (strict)
ON_GOAL = 0.75  # turn on to here: a margin over ON_AT
OFF_GOAL = -0.002  # turn off until the joint reads below this (the stop is at -0.005)
LEAD = 0.2  # rad: aim the wrist this far past the knob's current angle
GRIP_Z = 0.030  # grip site this high over the knob's origin: fingertips around the fin (top ~0.05)
OVER_Z = 0.10  # approach and leave this high over the knob
# Where the hand ends a turn: the robot's start pose (measured after the 10 settling steps),
# so that a stove turned on and off again looks like the untouched start, hand included.
HOME = np.array([-0.2085, 0.0, 1.1733])


def knob_joint(stove: str = STOVE) -> str:
    return f"{stove}_button"


def knob_q(scene: Scene, stove: str = STOVE) -> float:
    return scene.joint(knob_joint(stove))


def is_on(scene: Scene, stove: str = STOVE) -> bool:
    return knob_q(scene, stove) >= ON_AT


def is_off(scene: Scene, stove: str = STOVE) -> bool:
    return knob_q(scene, stove) < OFF_BELOW


def knob_axis(scene: Scene, stove: str = STOVE) -> np.ndarray:
    """World point on the knob's hinge axis, at the knob's base."""
    sim = scene.env.sim
    return np.array(sim.data.xanchor[sim.model.joint_name2id(knob_joint(stove))], dtype=float)


def fin_rot(q: float) -> np.ndarray:
    """Hand orientation (pointing down) with the fingers across the fin at knob angle ``q``.

    At q = 0 the fin runs along world x, so DOWN (fingers closing along y) pinches it."""
    return rot_z(q) @ DOWN


class TurnKnob(Skill):
    """Turn the stove on (``on=True``: to ``ON_GOAL``) or off (to below 0), gripping the fin.

    Ends with the hand back at ``HOME``; succeeds when the stove then reads on (or off) by
    LIBERO's test.
    """

    max_steps = 360

    def __init__(self, on: bool, stove: str = STOVE):
        super().__init__()
        self.on, self.stove = on, stove
        self.name = "turn stove on" if on else "turn stove off"
        self.phase, self.phase_steps = "over", 0
        self.hold_rot: np.ndarray | None = None

    def _goto(self, phase: str) -> None:
        self.phase, self.phase_steps = phase, 0

    def _reached(self, q: float) -> bool:
        return q >= ON_GOAL if self.on else q < OFF_GOAL

    def step(self, scene: Scene) -> np.ndarray | None:
        self.phase_steps += 1
        q = knob_q(scene, self.stove)
        axis = knob_axis(scene, self.stove)
        pos, rot = scene.eef_pos(), scene.eef_rot()
        grip_at = axis + np.array([0.0, 0.0, GRIP_Z])
        over = axis + np.array([0.0, 0.0, OVER_Z])
        if self.phase == "over":
            target_rot = fin_rot(q)
            aligned = np.linalg.norm(rotation_error(rot, target_rot)) < 0.05
            if (np.linalg.norm(over - pos) < 0.01 and aligned) or self.phase_steps > 100:
                self._goto("descend")
            else:
                return pose_action(pos, rot, over, target_rot, OPEN)
        if self.phase == "descend":
            if np.linalg.norm(grip_at - pos) < 0.005 or self.phase_steps > 60:
                self._goto("close")
            else:
                return pose_action(pos, rot, grip_at, fin_rot(q), OPEN, max_speed=0.5)
        if self.phase == "close":
            if self.phase_steps > 12:
                self._goto("turn")
            else:
                return pose_action(pos, rot, grip_at, fin_rot(q), CLOSE)
        if self.phase == "turn":
            if self._reached(q):
                self._goto("hold")
                self.hold_rot = fin_rot(q + (LEAD if self.on else -LEAD))
            elif self.phase_steps > 120:
                self._goto("release")
            else:
                lead = LEAD if self.on else -LEAD
                return pose_action(pos, rot, grip_at, fin_rot(q + lead), CLOSE)
        if self.phase == "hold":  # keep pressing: the knob settles back otherwise
            if self.phase_steps > 10:
                self._goto("release")
            else:
                return pose_action(pos, rot, grip_at, self.hold_rot, CLOSE)
        if self.phase == "release":
            if self.phase_steps > 12:
                self._goto("rise")
            else:
                return pose_action(pos, rot, grip_at, None, OPEN) * np.r_[1, 1, 1, 0, 0, 0, 1]
        if self.phase == "rise":
            if np.linalg.norm(over - pos) < 0.02 or self.phase_steps > 60:
                self._goto("home")
            else:
                return pose_action(pos, rot, over, None, OPEN)
        if self.phase == "home":
            if (
                np.linalg.norm(HOME - pos) < 0.01 and np.linalg.norm(rotation_error(rot, DOWN)) < 0.05
            ) or self.phase_steps > 80:
                return self.finish(is_on(scene, self.stove) if self.on else is_off(scene, self.stove))
            return pose_action(pos, rot, HOME, DOWN, OPEN)
        return None

    def __repr__(self) -> str:
        return f"TurnKnob({'on' if self.on else 'off'}:{self.phase})"


# -- what a plan remembers about the knob ------------------------------------------------------


def start_memory(memory: dict) -> None:
    """The episode starts: the stove has not been turned on yet."""
    memory["stove"] = "untouched"


def note_turn(finished: Skill, scene: Scene, memory: dict) -> None:
    """Update ``memory["stove"]`` ("untouched" -> "was on" -> "cycled") after a knob turn."""
    if not isinstance(finished, TurnKnob) or "stove" not in memory:
        return
    if finished.on and is_on(scene, finished.stove):
        memory["stove"] = "was on"
    elif not finished.on and is_off(scene, finished.stove) and memory["stove"] == "was on":
        memory["stove"] = "cycled"


def knob_to_turn(scene: Scene, memory: dict, guess) -> TurnKnob | None:
    """The knob turn still needed to have turned the stove on and then off, or None when done.

    A knob that reads on must be turned off (the scene shows it). A knob at rest looks
    the same before the first turn and after an on-off cycle (q = 0 vs ~-0.005 rad, a
    third of a degree, and the hand back at ``HOME`` either way), so without memory
    ``guess(options)`` picks between "turn it on" and "already done".
    """
    if is_on(scene):
        return TurnKnob(on=False)
    state = memory.get("stove")
    if state is None:  # memoryless: at rest, not yet turned on or already cycled
        return guess((TurnKnob(on=True), None))
    if state == "was on":  # turned on, the turn off did not reach q < 0: again
        return TurnKnob(on=False)
    return TurnKnob(on=True) if state == "untouched" else None
