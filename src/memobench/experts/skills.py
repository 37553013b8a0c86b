"""Skills: small closed-loop state machines that turn the scene into actions.

A skill's :meth:`Skill.act` is called once per control step with the
current :class:`~memobench.experts.scene.Scene` and returns the action, or
``None`` when it has finished (``succeeded`` then says how). Targets given
as callables are re-read every step, so a skill follows an object that
moves. Skills hold no reference to the scene or the simulator: the policy
copies them to roll its plan back to the step the harness actually reached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, hold_action, pose_action, rotation_error
from memobench.experts.scene import Scene

Target = np.ndarray | Callable[[Scene], np.ndarray]
RotTarget = np.ndarray | Callable[[Scene], np.ndarray] | None

HOLD_GRIP = 0.0  # a gripper command that keeps the fingers where they are (the gripper acts on its sign)
GRIP_STEPS = 15  # the gripper closes or opens fully in ~10 steps (measured)


def _resolve(target, scene: Scene):
    return target(scene) if callable(target) else target


class Skill:
    """Base class: subclasses implement :meth:`step`; ``act`` counts steps and finishes."""

    name = "skill"
    max_steps = 200

    def __init__(self) -> None:
        self.steps = 0
        self.finished = False
        self.succeeded = False

    def act(self, scene: Scene) -> np.ndarray | None:
        if self.finished:
            return None
        if self.steps >= self.max_steps:
            return self.finish(False)
        action = self.step(scene)
        if action is not None:
            self.steps += 1
        return action

    def step(self, scene: Scene) -> np.ndarray | None:
        raise NotImplementedError

    def finish(self, ok: bool) -> None:
        self.finished, self.succeeded = True, ok
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class MoveTo(Skill):
    """Servo the grip site to a position (and orientation); done within ``tol``."""

    def __init__(
        self,
        target: Target,
        rot: RotTarget = DOWN,
        grip: float = OPEN,
        *,
        tol: float = 0.008,
        rot_tol: float = 0.05,
        max_steps: int = 150,
        max_speed: float = 1.0,
        name: str = "move",
    ):
        super().__init__()
        self.target, self.rot, self.grip = target, rot, grip
        self.tol, self.rot_tol, self.max_steps, self.max_speed = tol, rot_tol, max_steps, max_speed
        self.name = name

    def step(self, scene: Scene) -> np.ndarray | None:
        pos, rot = scene.eef_pos(), scene.eef_rot()
        target, target_rot = _resolve(self.target, scene), _resolve(self.rot, scene)
        close = np.linalg.norm(target - pos) < self.tol
        aligned = target_rot is None or np.linalg.norm(rotation_error(rot, target_rot)) < self.rot_tol
        if close and aligned:
            return self.finish(True)
        return pose_action(pos, rot, target, target_rot, self.grip, max_speed=self.max_speed)


class MoveToFixed(MoveTo):
    """:class:`MoveTo` whose target is read once, at its first step: it does not chase an object
    the hand pushes along (a carton left on a finger pad moves with the hand)."""

    def step(self, scene: Scene) -> np.ndarray | None:
        if callable(self.target):
            self.target = np.asarray(self.target(scene), dtype=float)
        return super().step(scene)


class Grip(Skill):
    """Hold the hand where it is and open or close the gripper for ``steps`` steps."""

    def __init__(self, grip: float, steps: int = GRIP_STEPS, rot: RotTarget = DOWN, name: str = "grip"):
        super().__init__()
        self.grip, self.hold_steps, self.rot, self.name = grip, steps, rot, name
        self.anchor: np.ndarray | None = None

    def step(self, scene: Scene) -> np.ndarray | None:
        if self.steps >= self.hold_steps:
            return self.finish(True)
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        return pose_action(scene.eef_pos(), scene.eef_rot(), self.anchor, _resolve(self.rot, scene), self.grip)


class Wait(Skill):
    """Hold still for ``steps`` steps (the gripper command unchanged)."""

    def __init__(self, steps: int, grip: float = OPEN, name: str = "wait"):
        super().__init__()
        self.hold_steps, self.grip, self.name = steps, grip, name

    def step(self, scene: Scene) -> np.ndarray | None:
        if self.steps >= self.hold_steps:
            return self.finish(True)
        return hold_action(self.grip)


class Chain(Skill):
    """Skills one after another; fails as soon as a part fails (unless ``tolerant``)."""

    def __init__(self, parts: Sequence[Skill], name: str = "chain", tolerant: bool = False):
        super().__init__()
        self.parts, self.index, self.name, self.tolerant = list(parts), 0, name, tolerant
        self.max_steps = sum(p.max_steps for p in self.parts) + 1

    @property
    def current(self) -> Skill | None:
        return self.parts[self.index] if self.index < len(self.parts) else None

    def step(self, scene: Scene) -> np.ndarray | None:
        while self.index < len(self.parts):
            part = self.parts[self.index]
            action = part.act(scene)
            if action is not None:
                return action
            if not part.succeeded and not self.tolerant:
                return self.finish(False)
            self.index += 1
        return self.finish(True)

    def __repr__(self) -> str:
        return f"Chain({self.name}: {self.current!r})"


# -- compound skills ------------------------------------------------------------------------


def above(name: str, height: float, offset: np.ndarray | None = None) -> Callable[[Scene], np.ndarray]:
    """A target ``height`` metres above object ``name`` (plus an xyz ``offset``), followed live."""
    extra = np.zeros(3) if offset is None else np.asarray(offset, dtype=float)

    def target(scene: Scene) -> np.ndarray:
        return scene.pos(name) + np.array([0.0, 0.0, height]) + extra

    return target


class Rise(Skill):
    """Move straight up (or down) to absolute height ``z`` above where the skill started."""

    def __init__(
        self,
        z: float,
        rot: RotTarget = DOWN,
        grip: float = OPEN,
        *,
        tol: float = 0.015,
        max_steps: int = 100,
        name: str = "rise",
    ):
        super().__init__()
        self.z, self.rot, self.grip, self.tol, self.max_steps, self.name = z, rot, grip, tol, max_steps, name
        self.anchor: np.ndarray | None = None

    def step(self, scene: Scene) -> np.ndarray | None:
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        target = np.array([self.anchor[0], self.anchor[1], self.z])
        if abs(scene.eef_pos()[2] - self.z) < self.tol:
            return self.finish(True)
        return pose_action(scene.eef_pos(), scene.eef_rot(), target, _resolve(self.rot, scene), self.grip)


class BackOff(Skill):
    """Move ``distance`` m straight toward the robot (-x) from where the skill started, keeping the
    hand's orientation: away from a fixture's handle or knob (fixtures face the robot)."""

    def __init__(self, distance: float, grip: float = OPEN, *, tol: float = 0.02, max_steps: int = 60):
        super().__init__()
        self.distance, self.grip, self.tol, self.max_steps, self.name = distance, grip, tol, max_steps, "back off"
        self.target: np.ndarray | None = None

    def step(self, scene: Scene) -> np.ndarray | None:
        if self.target is None:
            self.target = scene.eef_pos() - np.array([self.distance, 0.0, 0.0])
        if np.linalg.norm(scene.eef_pos() - self.target) < self.tol:
            return self.finish(True)
        return pose_action(scene.eef_pos(), scene.eef_rot(), self.target, None, self.grip)


TABLE_Z = 0.90  # the kitchen table's top, world z


def pick(
    name: str,
    grasp_height: float,
    *,
    approach: float = 0.12,
    lift: float = 0.15,
    rot: RotTarget = DOWN,
    offset: np.ndarray | None = None,
    table_z: float = TABLE_Z,
) -> Chain:
    """Grasp ``name`` from above at ``grasp_height`` over its origin, then lift it ``lift`` above the table
    (whose top is at ``table_z``: the kitchen table's unless given, :meth:`Scene.table_top`)."""
    return Chain(
        [
            MoveTo(above(name, approach, offset), rot, OPEN, tol=0.01, name="over"),
            MoveTo(above(name, grasp_height, offset), rot, OPEN, tol=0.006, max_speed=0.5, name="descend"),
            Grip(CLOSE, rot=rot, name="close"),
            Rise(table_z + lift, rot, CLOSE, name="lift"),
        ],
        name=f"pick {name}",
    )


def place_at(
    target: Target,
    *,
    carry_height: float = 0.15,
    release_height: float = 0.0,
    rot: RotTarget = DOWN,
    retreat_z: float = TABLE_Z + 0.2,
    held: str | None = None,
    release_steps: int | None = None,
) -> Chain:
    """Carry the held object so the hand is over ``target``, lower to it, release, rise to ``retreat_z``.

    With ``held`` (the object's name), the open hand first centres itself over
    the object: an object left leaning on one finger pad is otherwise dragged
    up with it (seen with the milk cartons). With ``release_steps``, the fingers
    open for only that many steps and keep that opening while the hand rises
    (fully open, they pressed on a bowl's rim from inside and lifted the bowl: O02).
    """

    def over(scene: Scene) -> np.ndarray:
        return _resolve(target, scene) + np.array([0.0, 0.0, carry_height])

    def down(scene: Scene) -> np.ndarray:
        return _resolve(target, scene) + np.array([0.0, 0.0, release_height])

    def centred(scene: Scene) -> np.ndarray:
        return np.array([*scene.pos(held)[:2], scene.eef_pos()[2]])

    parts: list[Skill] = [
        MoveTo(over, rot, CLOSE, tol=0.012, name="carry"),
        MoveTo(down, rot, CLOSE, tol=0.008, max_speed=0.5, name="lower"),
        Grip(OPEN, steps=release_steps or GRIP_STEPS, rot=rot, name="release"),
    ]
    after = OPEN if release_steps is None else HOLD_GRIP
    if held is not None:
        parts.append(MoveTo(centred, rot, after, tol=0.003, max_steps=20, max_speed=0.3, name="centre"))
    parts.append(Rise(retreat_z, rot, after, name="retreat"))
    return Chain(parts, name="place", tolerant=True)
