"""The datasets a demo file's ``data/demo_<i>`` group may hold, checked from HDF5 metadata alone.

A demo file is untrusted input. Its datasets' shapes and dtypes are known before a byte of
them is read, so they are checked then: a dataset declared with 10^11 rows (HDF5 stores
nothing until written, so such a file is a few kB) would otherwise be allocated whole by the
first reader, a text ``actions`` array exported as numbers, and a robot state of the wrong
width fail deep inside an export. :func:`check_demo_groups` raises one
:class:`DemoLayoutError` naming the file, the demo and the dataset instead; every reader of
demo files calls it when it opens one (:func:`memobench.data.demo_file.open_demo_file`).

Layout (``T`` = the group's ``num_samples``, ``C`` = the cue's frames, ``S`` = the MuJoCo
state's width, one per demo, ``H`` = an image side), as :mod:`memobench.data.demo_file` documents:

========================================  =====================  =========
dataset                                   shape                  dtype
========================================  =====================  =========
actions, executed_actions (optional)      [T, 7]                 float64
states                                    [T, S]                 float64
robot_states                              [T, 8]                 float32
obs/ee_pos, ee_ori, gripper_states,       [T, 3], [T, 4],        float64
obs/joint_states (optional)               [T, 2], [T, 7]
cue/states, cue/robot_states (optional)   [C, S], [C, 8]         float64, float32
obs/<camera>_rgb, cue/<camera>_rgb        [T or C, H, H, 3]      uint8
========================================  =====================  =========

Anything else in a demo group is refused: no reader needs it, and every reader would copy it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import h5py

MAX_STEPS = 20_000  # rows of one demo or cue; the longest horizon is 3,100 steps
MAX_STATE_WIDTH = 10_000  # MuJoCo integration state entries; the suite's scenes have < 300
MAX_IMAGE_SIDE = 1_024  # pixels; demos are rendered at 128 or 224
# bytes of one demo's datasets together: within the limits above one image dataset could still
# be 60 GB; the longest demo at 512 px with its cue is ~5 GB, at 224 px under 1 GB
MAX_DEMO_BYTES = 8 * 1024**3
IMAGE_KEYS = {"agentview": "agentview_rgb", "wrist": "eye_in_hand_rgb"}  # camera -> LIBERO's observation name

# key -> (dtype, trailing shape (None: the state width S), leading length: "T" or "C", required)
FIELDS: dict[str, tuple[Any, tuple[int, ...] | None, str, bool]] = {
    "actions": (np.float64, (7,), "T", True),
    "executed_actions": (np.float64, (7,), "T", False),
    "states": (np.float64, None, "T", True),
    "robot_states": (np.float32, (8,), "T", True),
    "obs/ee_pos": (np.float64, (3,), "T", False),
    "obs/ee_ori": (np.float64, (4,), "T", False),
    "obs/gripper_states": (np.float64, (2,), "T", False),
    "obs/joint_states": (np.float64, (7,), "T", False),
    "cue/states": (np.float64, None, "C", False),
    "cue/robot_states": (np.float32, (8,), "C", False),
}
IMAGES = {f"{part}/{key}": "T" if part == "obs" else "C" for part in ("obs", "cue") for key in IMAGE_KEYS.values()}


class DemoLayoutError(ValueError):
    """A demo group holds a dataset of the wrong shape or dtype, an unknown one, or misses one."""


def demo_layout_problems(group: h5py.Group) -> list[str]:
    """What is wrong with the datasets of one ``data/demo_<i>`` group (empty: nothing), from
    metadata only: no dataset is read."""
    import h5py

    found: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}

    def keep(key: str, node: Any) -> None:
        if isinstance(node, h5py.Dataset):
            found[key] = (node.dtype, node.shape)

    group.visititems(keep)
    return layout_problems(group.attrs.get("num_samples"), found)


def _shape(dtype: Any, shape: tuple[int, ...]) -> str:
    return f"{np.dtype(dtype)}[{', '.join(map(str, shape))}]"


def layout_problems(steps: Any, datasets: Mapping[str, tuple[Any, tuple[int, ...]]]) -> list[str]:
    """What is wrong with a demo of ``steps`` (its ``num_samples``) holding ``datasets``
    (key -> (dtype, shape)), against the layout above; empty: nothing."""
    if not isinstance(steps, int | np.integer) or isinstance(steps, bool) or not 0 <= steps <= MAX_STEPS:
        return [f"attribute 'num_samples' is {steps!r}; expected a step count in 0..{MAX_STEPS}"]
    problems = [f"unexpected dataset {key}" for key in sorted(datasets) if key not in FIELDS and key not in IMAGES]
    problems += [f"missing {key}" for key, (*_, required) in FIELDS.items() if required and key not in datasets]
    states = datasets.get("states", (None, (0, 1)))[1]
    if not (len(states) == 2 and 0 < states[1] <= MAX_STATE_WIDTH):
        problems.append(f"states are {list(states)}; expected [T, S], S in 1..{MAX_STATE_WIDTH}")
    images = [datasets[k][1] for k in IMAGES if k in datasets]
    side = images[0][1] if images and len(images[0]) == 4 else 0
    if images and not 0 < side <= MAX_IMAGE_SIDE:
        problems.append(f"images are {list(images[0])}; expected [T, H, H, 3], H in 1..{MAX_IMAGE_SIDE}")
    cue = next(((datasets[k][1] or (0,))[0] for k in ("cue/robot_states", "cue/states") if k in datasets), 0)
    if cue > MAX_STEPS:
        problems.append(f"the cue has {cue} frames; at most {MAX_STEPS}")
    if problems:
        return problems
    rows = {"T": int(steps), "C": cue}
    for key, (dtype, shape) in sorted(datasets.items()):
        if key in FIELDS:
            want, tail, length, _ = FIELDS[key]
            expected = (rows[length], *(tail if tail is not None else states[1:]))
        else:
            want, length = np.uint8, IMAGES[key]
            expected = (rows[length], side, side, 3)
        if dtype != want or tuple(shape) != expected:
            rows_of = "num_samples" if length == "T" else "the cue's frames"
            problems.append(
                f"{key} is {_shape(dtype, shape)}, expected {_shape(want, expected)} ({rows[length]} rows: {rows_of})"
            )
    size = sum(int(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize for dtype, shape in datasets.values())
    if size > MAX_DEMO_BYTES:
        problems.append(f"its datasets hold {size / 1024**3:.0f} GiB; a demo holds at most {MAX_DEMO_BYTES // 1024**3}")
    return problems


def check_demo_groups(f: h5py.File, path: Path) -> None:
    """Raise :class:`DemoLayoutError` naming ``path``, the demo and the dataset if any
    ``data/demo_<i>`` group of the open file ``f`` breaks the layout (or ``data`` is missing)."""
    import h5py

    data = f.get("data")
    if not isinstance(data, h5py.Group):
        raise DemoLayoutError(f"{path}: no 'data' group; not a demo file written by memobench collect")
    for name in data:
        if not name.startswith("demo_"):
            continue
        node = data[name]
        problems = demo_layout_problems(node) if isinstance(node, h5py.Group) else ["is not a group"]
        if problems:
            raise DemoLayoutError(f"{path}: data/{name}: " + "; ".join(problems[:3]))
