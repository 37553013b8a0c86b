"""``memobench data validate``: every demo replays to the same episode it claims to be.

Per demo: the arrays have the documented shapes and dtypes, actions lie in
[-1, 1], key frames are increasing, and - the real check - replaying the
stored actions through the harness from the demo's seed (same binding,
layout, cue and stabilisation) completes every checkpoint within
:data:`KEY_FRAME_TOLERANCE` steps of its recorded key frame and succeeds.
The replay also reports how far the replayed states drift from the stored
ones (0 on the machine that recorded them: the simulator is deterministic).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memobench.core.suite import Suite, Task, UnknownTaskError
from memobench.data.demo_bddl import DemoFileError, arm_jitter_problem, suite_scenes
from memobench.data.demo_file import Demo, non_finite_rows, read_task_file
from memobench.data.demo_layout import layout_problems
from memobench.data.recorder import DemoRecorder
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode

KEY_FRAME_TOLERANCE = 2  # steps; another machine's BLAS may round the last bits differently
STATE_TOLERANCE = 1e-6  # largest |replayed - stored| state entry still called identical

# what a complete demo holds beyond the layout's required arrays (the robot's proprioception)
PROPRIO = ("obs/ee_pos", "obs/ee_ori", "obs/gripper_states", "obs/joint_states")


@dataclass
class DemoCheck:
    """Problems found in one demo (empty = valid) and the replay's state drift."""

    task_id: str
    demo: int
    problems: list[str] = field(default_factory=list)
    state_drift: float | None = None


class ReplayPolicy:
    """An adapter that plays back stored actions (chunks cut at the query's step).

    A policy is not told the step: this one counts the steps it observed (``observe`` is
    called after every executed step, and with ``cue`` for the cue's frames)."""

    needs_images = False

    def __init__(self, actions: np.ndarray):
        self.actions = actions
        self.step = 0

    def reset(self) -> None:
        self.step = 0

    def observe(self, obs) -> None:
        if not obs.get("cue"):
            self.step += 1

    def infer_actions(self, obs, prompt, resize_size):
        chunk = self.actions[self.step : self.step + 50]
        return chunk if len(chunk) else np.zeros((1, 7))


def static_problems(demo: Demo) -> list[str]:
    """Shape, dtype, bound and key-frame problems, without the simulator."""
    shapes = {key: (array.dtype, array.shape) for key, array in demo.arrays.items()}
    problems = layout_problems(demo.attrs.get("num_samples"), shapes)
    problems += [f"missing {key}" for key in PROPRIO if key not in demo.arrays]
    if problems:
        return problems
    n = demo.length
    for key in ("actions", "executed_actions"):
        actions = demo.arrays.get(key)
        if actions is not None and np.isfinite(actions).all() and np.abs(actions).max() > 1.0:
            problems.append(f"{key} outside [-1, 1]")
    problems += non_finite_rows(demo)
    jitter = arm_jitter_problem(demo.attrs)
    if jitter:
        problems.append(jitter)
    frames = [c["key_frame"] for c in demo.attrs["checkpoints"] if not c["optional"]]
    if any(f is None for f in frames):
        problems.append("a required checkpoint has no key frame (not a successful demo)")
    elif frames != sorted(frames) or (frames and frames[-1] >= n):
        problems.append(f"key frames {frames} not increasing within the demo's {n} steps")
    return problems


def replay_problems(task: Task, demo: Demo, seed_base: int, env) -> tuple[list[str], float | None]:
    """Replay the demo's actions through the harness; returns (problems, state drift)."""
    from memobench.policies.adapter import AdapterGuard

    plan = plan_episode(task, demo.attrs["attempt"], seed_base)
    if plan.layout_seed != demo.attrs["layout_seed"] or plan.variant != demo.attrs["variant"]:
        return ["the demo's seed gives another binding or layout today (task or seeding changed)"], None
    recorder = DemoRecorder()
    # what ran: a perturbed demo's labels (``actions``) would not retrace its states
    guard = AdapterGuard(ReplayPolicy(demo.arrays.get("executed_actions", demo.arrays["actions"])), timeout=None)
    protocol = Protocol(seed=seed_base, adapter_timeout=0, commitments_to_horizon=False)  # as collected
    record = run_episode(task, plan, env, guard, protocol, recorder=recorder).record
    problems = []
    stored = demo.arrays["states"]
    replayed = np.stack(recorder.states) if recorder.states else np.zeros((0, stored.shape[1]))
    if replayed.shape[1] != stored.shape[1]:
        return [f"states are {stored.shape[1]} wide; this scene's MuJoCo state has {replayed.shape[1]}"], None
    common = min(len(replayed), len(stored))
    drift = float(np.abs(replayed[:common] - stored[:common]).max()) if common else None
    if not record.success:
        problems.append(f"replay did not succeed (end: {record.end_reason})")
    for cp, result in zip(demo.attrs["checkpoints"], record.checkpoints, strict=True):
        want, got = cp["key_frame"], result.step
        if want is None or got is None:
            if want != got:
                problems.append(f"checkpoint {cp['id']}: key frame {want}, replay {got}")
        elif abs(want - got) > KEY_FRAME_TOLERANCE:
            problems.append(f"checkpoint {cp['id']}: key frame {want}, replay completes at {got}")
    return problems, drift


def validate_file(
    path: Path, *, episodes: int | None = None, replay: bool = True, on_demo: Callable[[DemoCheck], None] | None = None
) -> list[DemoCheck]:
    """Check one ``<task_id>.hdf5``: file-level problems (demo index -1), then one check per demo."""
    from memobench.evaluation.envs import EnvCache

    try:
        task = Suite.load().get(path.stem)
    except UnknownTaskError as e:
        return [DemoCheck(path.stem, -1, [f"{path.name}: {e}"])]
    try:
        attrs, demos = read_task_file(path, images=False)
    except ValueError as e:  # not self-contained, or not the demo layout: nothing else is read
        return [DemoCheck(task.id, -1, [str(e)])]
    checks: list[DemoCheck] = []
    if episodes is not None and len(demos) < episodes:
        checks.append(DemoCheck(task.id, -1, [f"{len(demos)} demos, {episodes} requested"]))
    if attrs.get("spec_hash") != task.spec_hash:
        checks.append(DemoCheck(task.id, -1, ["recorded with another version of the task file"]))
    try:  # the checks render, features and train make before they build a scene from the file
        suite_scenes(path, attrs, demos)
    except DemoFileError as e:
        checks.append(DemoCheck(task.id, -1, [str(e)]))
    envs = EnvCache()  # one env a variant: consecutive demos cycle through them
    try:
        for i, demo in enumerate(demos):
            check = DemoCheck(task.id, i, static_problems(demo))
            if replay and not check.problems:
                plan = plan_episode(task, demo.attrs["attempt"], attrs["seed_base"])
                env, _ = envs.get(task, plan.variant, plan.binding, render=False)
                problems, check.state_drift = replay_problems(task, demo, attrs["seed_base"], env)
                check.problems += problems
            checks.append(check)
            if on_demo:
                on_demo(check)
    finally:
        envs.close()
    return checks


def missing_tasks(folder: Path, tasks: list[str]) -> list[DemoCheck]:
    """A coverage problem for every task in ``tasks`` without a file in ``folder``."""
    return [DemoCheck(t, -1, [f"no file {t}.hdf5"]) for t in tasks if not (folder / f"{t}.hdf5").exists()]


def validate_dir(
    folder: Path,
    *,
    tasks: list[str] | None = None,
    episodes: int | None = None,
    replay: bool = True,
    on_demo: Callable[[DemoCheck], None] | None = None,
) -> list[DemoCheck]:
    """Check every ``<task_id>.hdf5`` in ``folder`` in this process; ``tasks``/``episodes`` add coverage checks."""
    checks = missing_tasks(folder, tasks or [])
    for path in sorted(folder.glob("*.hdf5")):
        checks += validate_file(path, episodes=episodes, replay=replay, on_demo=on_demo)
    return checks
