"""The ``state`` observation as one fixed-length vector, for every task alike.

``[robot_state (8), object poses (MAX_OBJECTS x 7: xyz, quaternion wxyz), object visible
(MAX_OBJECTS), fixture joints (MAX_JOINTS)]``: the ``state`` observation
(:func:`memobench.sim.scene_state.state_observation`, the Gymnasium API's ``state`` mode)
flattened and zero-padded to the suite's largest scene, so it shows exactly what that shows:
objects in sorted name order and joints in sorted fixture order; an object no camera could see
(in a shut drawer or microwave) has a zero pose and visible 0; a fixture joint within its shut
band reads 0.0.

The same function builds the vector from the live simulator at evaluation
(:mod:`memobench.training.checkpoint_policy`) and from stored physics states for training
(:func:`featurise_task_file`), so a policy is evaluated on exactly what it was trained on.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from memobench.data.hdf5_input import open_hdf5
from memobench.sim.scene_state import SceneLayout, state_observation

MAX_OBJECTS = 12
MAX_JOINTS = 8
ROBOT_DIM = 8
STATE_DIM = ROBOT_DIM + MAX_OBJECTS * 8 + MAX_JOINTS
# v2: fixture joints within their shut band read 0.0 (v1 gave the raw joint value)
FEATURES_FORMAT = "memobench-state-v2"


def scene_layout(env) -> SceneLayout:
    """The objects and fixture joints of ``env``'s scene, in observation order; ValueError when
    the scene has more than the vector holds."""
    layout = SceneLayout.of(env)
    if len(layout.objects) > MAX_OBJECTS or len(layout.fixture_joints) > MAX_JOINTS:
        raise ValueError(
            f"scene has {len(layout.objects)} objects and {len(layout.fixture_joints)} fixture joints; "
            f"the state vector holds {MAX_OBJECTS} and {MAX_JOINTS}"
        )
    return layout


def state_vector(env, world, robot_state: np.ndarray) -> np.ndarray:
    """The state vector (float32 [STATE_DIM]) of the scene ``env`` holds now, with ``robot_state``
    (the recorded one: a stored physics state has no robosuite observation to read it from)."""
    layout = scene_layout(env)
    obs = state_observation(env, world, layout)
    n, m = len(layout.objects), len(layout.fixture_joints)
    out = np.zeros(STATE_DIM, np.float32)
    out[:ROBOT_DIM] = robot_state
    out[ROBOT_DIM : ROBOT_DIM + n * 7] = obs["object_poses"].ravel()
    visible = ROBOT_DIM + MAX_OBJECTS * 7
    out[visible : visible + n] = obs["object_visible"]
    joints = visible + MAX_OBJECTS
    if m:
        out[joints : joints + m] = obs["fixture_joints"]
    return out


def feature_rows(f, demo: str, path: Path) -> np.ndarray:
    """Demo ``demo``'s state vectors [T, STATE_DIM] float32 from the open features file ``f`` (at
    ``path``); DemoLayoutError naming the file if it is missing or another shape (checked before it
    is read: a features file is as untrusted as the demo file it was made from)."""
    import h5py

    from memobench.data.demo_layout import MAX_STEPS, DemoLayoutError

    group = f.get(demo)
    node = group.get("state") if isinstance(group, h5py.Group) else None
    if not isinstance(node, h5py.Dataset):
        raise DemoLayoutError(f"{path}: no dataset {demo}/state; run memobench data features again")
    shape = node.shape
    if len(shape) != 2 or shape[0] > MAX_STEPS or shape[1] != STATE_DIM or node.dtype != np.float32:
        got = f"{node.dtype}{list(shape)}"
        raise DemoLayoutError(f"{path}: {demo}/state is {got}; expected float32[T, {STATE_DIM}], T <= {MAX_STEPS}")
    return node[()]


def features_path(features_dir: Path, demo_file: Path) -> Path:
    return features_dir / f"{demo_file.stem}.state.hdf5"


def features_current(demo_file: Path, features_file: Path) -> bool:
    """True when ``features_file`` was made from ``demo_file`` as it is now (format, spec hash, counts)."""

    from memobench.data.demo_file import read_file_summary

    if not features_file.exists():
        return False
    attrs, count = read_file_summary(demo_file)
    try:
        with open_hdf5(features_file) as f:
            got = dict(f.attrs)
    except OSError:
        return False
    return (
        got.get("format") == FEATURES_FORMAT
        and got.get("spec_hash") == attrs.get("spec_hash")
        and int(got.get("demos", -1)) == count
        and int(got.get("total", -1)) == int(attrs.get("total", -2))
    )


def stale_feature_files(demo_files: list[Path], features_dir: Path) -> list[Path]:
    """The demo files among ``demo_files`` whose features in ``features_dir`` are missing or stale."""
    return [p for p in demo_files if not features_current(p, features_path(features_dir, p))]


def featurise_task_file(demo_file: Path, features_file: Path) -> int:
    """Write the state vector of every step of every demo of ``demo_file``; returns the frames written.

    Each demo's scene is the suite's BDDL of its task and variant (as ``data render`` builds it),
    reset to the demo's layout; each stored physics state is set and forwarded, and the vector
    read with the demo's recorded robot state. Layout: ``demo_<i>/state`` [T, STATE_DIM] float32;
    file attributes ``format``, ``spec_hash``, ``demos``, ``total``. Written to a partial file and
    swapped in, so a killed run leaves no half file.
    """
    import h5py
    import mujoco

    from memobench.data.demo_bddl import replay_envs, suite_scenes
    from memobench.data.demo_file import iter_demos, read_file_summary
    from memobench.sim.world import WorldView

    attrs, count = read_file_summary(demo_file)
    headers = list(iter_demos(demo_file, arrays=False))
    scenes = suite_scenes(demo_file, attrs, headers)
    features_file.parent.mkdir(parents=True, exist_ok=True)
    partial = features_file.with_suffix(f".partial-{os.getpid()}")
    written = 0
    try:
        replays = replay_envs(iter_demos(demo_file, images=False), scenes, render=False)
        with h5py.File(partial, "w") as out, contextlib.closing(replays):
            for i, demo, env in replays:
                world = WorldView(env)
                model, data = env.sim.model._model, env.sim.data._data
                rows = []
                for physics, robot in zip(demo.arrays["states"], demo.arrays["robot_states"], strict=True):
                    env.set_physics_state(physics)
                    mujoco.mj_forward(model, data)
                    rows.append(state_vector(env, world, robot))
                out.create_dataset(f"demo_{i}/state", data=np.stack(rows) if rows else np.zeros((0, STATE_DIM)))
                written += len(rows)
            out.attrs.update(
                {"format": FEATURES_FORMAT, "spec_hash": attrs.get("spec_hash", ""), "demos": count}
                | {"total": int(attrs.get("total", written))}
            )
        os.replace(partial, features_file)
    finally:
        partial.unlink(missing_ok=True)
    return written
