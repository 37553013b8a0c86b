"""The plan runner: one skill at a time, decisions from the scene and an explicit memory.

A :class:`Plan` (one per task) answers two questions: what did I just learn
(:meth:`Plan.remember`, after every skill and from the cue), and what do I do
next (:meth:`Plan.next_skill`). Everything a plan needs to remember goes in
the :class:`Memory`; a plan keeps no other state between decisions.

Three variants run the same plans (:class:`Mode`):

- ``memoryless``: the memory is cleared before every decision, so each
  decision sees only the current scene. Where the scene does not settle a
  choice, the plan draws uniformly from the choices consistent with it
  (:meth:`Plan.choose`), from the episode's generator, so it scores what
  guessing scores.
- ``reactive``: memoryless and deterministic: it always takes the first choice,
  and plans list their choices so that the first is what the current image
  invites (open what is closed, turn on what is off, pour again while the
  bottle is upright, search the top drawer first, take the first candidate in
  the row). It never concludes that a task is done unless the scene shows it.
Every variant decides with the arm at home: before a decision, with its hand empty
and every drawer, door and knob shut, the runner first brings the hand back to its
start pose (:class:`GoHome`). Where the arm stopped (at the handle of the drawer it
just shut) is then never part of what a decision sees, as the home gates of
docs/protocol.md ("Registers") require of every policy.

- ``slow``: full memory, taking up to twice the expert's steps: after each skill that
  leaves its hand empty it holds still as long as the skill took (:data:`SLOW_FACTOR`).
  The stand-in for a learned policy slower than the scripted expert.
- ``arm``: the expert whose memory lives in the arm's pose (``adversary-arm``): it keeps
  what it learnt only while the hand stays away from home. It goes home only when the
  episode waits for it there (a home gate is next: :attr:`Expert.gate_pending`, set by
  the policy), and whenever it decides with the hand at home its memory is wiped (the
  register erased; the start pose is home, so a cue is forgotten at the first decision).
  Where no gate makes it go home, it solves the task from the arm alone.
- ``crawl``: the reactive expert at a quarter of its speed: after each skill it holds
  still for :data:`CRAWL_FACTOR` - 1 times the steps the skill took (its motions keep
  their speed: paused mid-motion, the servo stalled short of a drawer's handle). The
  adversary whose redo of a finished step comes long after any window a rule could
  watch for (``adversary-slow``).
- ``state``: before every decision its memory is replaced by the expert's memory at the
  recorded decision whose state observation is nearest the current one
  (:attr:`Expert.table`, :mod:`~memobench.experts.state_table`): a memoryless policy that
  reads its history out of every number of the state (``adversary-state``).
- ``scene``: the expert whose memory survives only while a tally it wrote stands in the scene
  (``adversary-scene``, :mod:`~memobench.experts.scene_tally`): deciding with its hand empty,
  everything shut and something in memory, it first shoves an object no checkpoint needs moved
  off its place; at every later such decision it keeps its memory if that object still stands
  off its place and forgets everything otherwise. The register rules forbid the shove; it measures
  that they fire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from memobench.experts.control import DOWN, OPEN, hold_action, pose_action
from memobench.experts.scene import Scene
from memobench.experts.scene_tally import TallyShove
from memobench.experts.side_grasp import side_rot
from memobench.experts.skills import BackOff, Chain, MoveTo, MoveToFixed, Rise, Skill


class Memory(dict):
    """What the expert remembers within an episode (a plain dict, cleared between episodes)."""


class Mode(StrEnum):
    """Which expert runs a plan (module docstring)."""

    EXPERT = "expert"
    MEMORYLESS = "memoryless"
    REACTIVE = "reactive"
    SLOW = "slow"
    CRAWL = "crawl"
    ARM = "arm"
    STATE = "state"
    SCENE = "scene"


# The slow and crawling experts take this many times their plan's steps: after each skill
# they hold still (the gripper command kept) for factor - 1 times the steps the skill took.
# Their motions keep the expert's speed: pausing mid-motion changed the path (a zero-delta
# step resets the controller's goal), and from some jittered starts that path ran the wrist
# into its joint limit short of T01's handle (the slow expert failed 3/20 of T01 and T02).
# The slow expert pauses only with its hand empty: paused with the bottle just poured, T09's
# next pour counter saw a pour outside the zone as the bottle was carried off (5/20 failed).
SLOW_FACTOR = {Mode.SLOW: 2, Mode.CRAWL: 4}
CRAWL_FACTOR = SLOW_FACTOR[Mode.CRAWL]
HOME_TOL = 0.01  # metres: where GoHome stops, well inside the 3 cm home() allows
HOME_BACKOFF = 0.08  # metres GoHome backs away (toward the robot, -x) from a fixture before it rises
HOME_HIGH = 0.05  # metres over the home height from which GoHome goes over home before it descends
WRIST = 4  # joint 5, 0-based: 0 with the hand pointing down from the start pose, ~2.2-2.5 turned level
WRIST_FLIPPED = 1.5  # radians of joint 5 beyond which GoHome unflips the wrist first
UNFLIP_YAW = np.radians(90.0)  # the level hand points this way (+y) while the wrist unflips
FULLY_OPEN = 0.0798  # metres between the finger joints: open (0.080 at a start) to 0.2 mm
TALLY_TRIES = 3  # scene mode: shoves it tries (each another way) before it gives its register up


class Plan:
    """How an expert solves one task; subclasses implement :meth:`next_skill`.

    ``reactive`` is set by the runner: :meth:`choose` then takes the first option.
    """

    task_id: str = ""
    reactive: bool = False

    def remember_cue(self, cue_states: Sequence[np.ndarray], scene: Scene, memory: Memory) -> None:
        """Store what the cue showed (hand positions of the cue video) before the first decision."""

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        """Fill ``memory`` as :meth:`remember_cue` would after the cue of ``binding``.

        For a ``demo`` cue, the harness runs this plan to perform the routine: it
        knows the binding, so it starts with what an expert would have learnt from
        watching. Plans of tasks with a ``demo`` cue implement it.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot demonstrate its task (no demonstrate_memory)")

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        """Store what the skill that just finished changed or revealed."""

    def finished(self, scene: Scene) -> bool:
        """Whether the scene shows the plan's last step done, asked before the hand goes home.

        For plans whose end is visible only in where the last skill left the hand (a
        parked hand after a set-down): the trip home would erase it. Plans whose end
        shows in the objects say so from :meth:`next_skill` (it returns None)."""
        return False

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        """The next skill, or None when the plan considers the task done."""
        raise NotImplementedError

    def choose(self, options: Sequence[Any], rng: np.random.Generator) -> Any:
        """A pick among ``options`` (the choices consistent with what is known): uniform,
        or the first one for the reactive expert (list what the scene invites first)."""
        if self.reactive:
            return options[0]
        return options[int(rng.integers(len(options)))]


class GoHome(Chain):
    """Bring the hand back to its start pose, fingers open (the pose ``home()`` tests).

    Clear of what it worked first: a hand pointing down (over an object it let go) rises
    straight up to the home height; a hand turned to a fixture (a drawer handle, a knob)
    backs away from it toward the robot, then rises. Then it servoes home. A hand well
    above the home height (over a cabinet's top, in the arena's scenes) goes over home at
    its height first and then down: a straight line home swept what it had set down there.
    A wrist flipped over (joint 5 past :data:`WRIST_FLIPPED`: a hand turned level to a
    drawer or a side-grasped bottle) is first turned to point along +y, then down, where
    the hand rose to: sent home as it was, the hand ran joints 5 and 6 into their limits and
    stopped up to 13 cm short of home (T03, S01, T10).
    """

    def __init__(self, scene: Scene):
        pos, rot = scene.home_pose()
        parts: list[Skill] = []
        if scene.eef_rot()[2, 2] > -0.9:  # the approach axis is not pointing down: at a fixture
            parts.append(BackOff(HOME_BACKOFF))
        height = scene.eef_pos()[2]
        if height > pos[2] + HOME_HIGH:
            parts.append(
                MoveTo(np.array([pos[0], pos[1], height]), None, OPEN, tol=0.02, max_steps=200, name="over home")
            )
        else:
            parts.append(Rise(pos[2], None, OPEN, max_steps=120, name="rise"))
        if abs(scene.arm_joints()[WRIST]) > WRIST_FLIPPED:
            parts += [_turn(side_rot(UNFLIP_YAW), "point along +y"), _turn(DOWN, "turn down")]
        parts.append(MoveTo(pos, rot, OPEN, tol=HOME_TOL, rot_tol=0.1, max_steps=200, name="home"))
        parts.append(OpenFully())
        super().__init__(parts, name="home", tolerant=True)


class OpenFully(Skill):
    """Hold the hand where it is until the fingers are open to :data:`FULLY_OPEN`.

    Under an open command the fingers creep open for ~100 steps after they let go: decided at
    once, a trip home left them 0.5 mm short of a start's (fully open, 0.080), which told a
    returned hand from one that never moved (``adversary-state``)."""

    max_steps = 150

    def __init__(self) -> None:
        super().__init__()
        self.name = "open fully"
        self.anchor: tuple[np.ndarray, np.ndarray] | None = None

    def step(self, scene: Scene) -> np.ndarray | None:
        if scene.finger_gap() >= FULLY_OPEN:
            return self.finish(True)
        if self.anchor is None:
            self.anchor = (scene.eef_pos(), scene.eef_rot())
        return pose_action(scene.eef_pos(), scene.eef_rot(), *self.anchor, OPEN)


def _turn(rot: np.ndarray, name: str) -> Skill:
    """Turn the open hand to ``rot`` where it is."""
    return MoveToFixed(lambda sc: sc.eef_pos(), rot, OPEN, tol=0.02, rot_tol=0.1, max_steps=100, name=name)


def needs_home(scene: Scene) -> bool:
    """Before a decision: the hand holds nothing, everything is shut, and the hand is not home."""
    return not scene.holding() and scene.all_shut() and not scene.at_home()


class Expert:
    """Runs a plan step by step; copied whole (``copy.deepcopy``) to roll back a look-ahead."""

    def __init__(self, plan: Plan, rng: np.random.Generator, mode: Mode | str = Mode.EXPERT):
        self.plan, self.rng, self.mode = plan, rng, Mode(mode)
        self.memoryless = self.mode in (Mode.MEMORYLESS, Mode.REACTIVE, Mode.CRAWL)
        self._rests: list[np.ndarray] = []  # the slow and crawling experts' next actions: pauses
        self._grip = OPEN  # the last gripper command (the pauses keep it)
        plan.reactive = self.mode in (Mode.REACTIVE, Mode.CRAWL)
        self.memory = Memory()
        self.skill: Skill | None = None
        self.done = False
        self.decisions = 0
        self._homed = False  # the last skill brought the hand home: decide now
        self.gate_pending = False  # arm mode: the episode waits for the arm at home (set by the policy)
        # state mode: a Shared DecisionTable whose lookup gives the memory of each decision
        self.table = None
        # scene mode: a Shared Tally (the register it writes and reads) and the shoves it tried
        self.tally = None
        self.shoves = 0
        # a Shared DecisionTable that records the state and memory of each decision (None: none)
        self.recorder = None

    def start(self, scene: Scene, cue_states: Sequence[np.ndarray]) -> None:
        self.plan.remember_cue(cue_states, scene, self.memory)

    def act(self, scene: Scene) -> np.ndarray:
        """The action for this step (:meth:`_act`, or one of the pauses the slow and crawling
        experts hold still for after a skill)."""
        if self._rests:
            return self._rests.pop()
        return np.asarray(self._act(scene))

    def _act(self, scene: Scene) -> np.ndarray:
        for _ in range(8):  # a few instant transitions (skills finishing at once) per step
            if self.skill is None:
                if self.done:
                    break
                if self.plan.finished(scene):
                    self.done = True
                    break
                if not self._homed and needs_home(scene) and (self.mode is not Mode.ARM or self.gate_pending):
                    self.skill, self._homed = GoHome(scene), True
                else:
                    self._homed = False
                    if self.mode is Mode.SCENE:
                        self.skill = self._scene_register(scene)
                        if self.skill is not None:
                            continue
                    if self.mode is Mode.STATE:
                        self.memory = self.table.value.lookup(scene)
                    elif self.memoryless or (self.mode is Mode.ARM and scene.at_home()):
                        self.memory.clear()
                    if self.recorder is not None:
                        self.recorder.value.record(scene, self.memory)
                    self.skill = self.plan.next_skill(scene, self.memory, self.rng)
                    self.decisions += 1
                    if self.skill is None:
                        self.done = True
                        break
            action = self.skill.act(scene)
            if action is not None:
                self._grip = float(action[6])
                return action
            if not isinstance(self.skill, GoHome | TallyShove):
                self.plan.remember(self.skill, scene, self.memory)
            factor = SLOW_FACTOR.get(self.mode, 1)
            if factor > 1 and self.skill.steps and not (self.mode is Mode.SLOW and scene.holding()):
                self._rests = [hold_action(self._grip)] * ((factor - 1) * self.skill.steps)
            self.skill = None
            if self._rests:
                return self._rests.pop()
        return hold_action(OPEN)

    def _scene_register(self, scene: Scene) -> Skill | None:
        """Scene mode, before a decision: the shove that writes the tally, or None (decide now,
        the memory kept or forgotten as the tally reads). With something in hand or a fixture
        open it is mid-task and keeps what it knows; with neither it decides as from home (where
        a trip home left it, if that trip failed: a hand stuck away from home is no register)."""
        tally = self.tally.value
        if tally.written(scene) or scene.holding() or not scene.all_shut():  # mid-task: still at it
            return None
        if self.memory and self.shoves < TALLY_TRIES:
            shove = tally.write(scene, self.shoves)
            self.shoves += 1
            if shove is not None:
                return shove
        self.memory.clear()
        return None
