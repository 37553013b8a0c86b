"""An interrupted ``data render`` keeps the demos it finished: the next render draws only the others.

The simulator is replaced by a stand-in that draws each state as a frame filled with a value
computed from the state: what is checked here is the bookkeeping (which demos are drawn, what
the finished file holds), not the pixels (tests/data/test_demos.py checks those against live frames).
"""

from __future__ import annotations

import shutil

import h5py
import numpy as np
import pytest
from tests.training.synthetic import write_dataset

import memobench.data.render as render

BOTH = ["agentview", "wrist"]
IMAGE_NAMES = [f"{prefix}/{key}" for prefix in ("obs", "cue") for key in ("agentview_rgb", "eye_in_hand_rgb")]


class Stopped(Exception):
    """What a worker told to stop raises from ``after_demo``."""


@pytest.fixture
def drawn(monkeypatch) -> list[int]:
    """The demos the stand-in simulator draws, in order."""
    drawn: list[int] = []

    def replay_envs(demos, scenes, only=None, **_env_kwargs):
        for i, demo in enumerate(demos):
            if only is None or i in only:
                drawn.append(i)
                yield i, demo, None

    def render_states(_env, states, cameras, size):
        values = (np.abs(states).sum(axis=1) * 1000 % 251).astype(np.uint8)
        shape = (len(states), size, size, 3)
        return {c: np.broadcast_to((values + k)[:, None, None, None], shape).copy() for k, c in enumerate(cameras)}

    monkeypatch.setattr(render, "suite_scenes", lambda _path, _attrs, demos: ["scene"] * len(demos))
    monkeypatch.setattr(render, "replay_envs", replay_envs)
    monkeypatch.setattr(render, "render_states", render_states)
    return drawn


def _stop_after(count: int):
    done = []

    def after_demo() -> None:
        done.append(1)
        if len(done) == count:
            raise Stopped

    return after_demo


def _images(path) -> dict:
    with h5py.File(path, "r") as f:
        data = f["data"]
        frames = {(d, n): data[d][n][()] for d in data if d.startswith("demo_") for n in IMAGE_NAMES}
        return frames | {"attrs": {k: data.attrs[k] for k in ("image_size", "cameras", "render_quality")}}


@pytest.fixture
def demo_file(tmp_path):
    """A four-demo file (the first with a cue) and an untouched copy of it."""
    write_dataset(tmp_path / "data", tmp_path / "features", tasks=1, demos=4)
    path = tmp_path / "data" / "T01-synthetic.hdf5"
    copy = tmp_path / "copy" / path.name
    copy.parent.mkdir()
    shutil.copyfile(path, copy)
    return path, copy


def test_an_interrupted_render_keeps_its_finished_demos_and_ends_as_an_uninterrupted_one(demo_file, drawn):
    path, copy = demo_file
    before = path.read_bytes()
    with pytest.raises(Stopped):
        render.render_task_file(path, 8, BOTH, after_demo=_stop_after(2), quality="fast")
    assert path.read_bytes() == before  # the file is as it was
    journal = path.with_suffix(".render")
    assert sorted(p.name for p in journal.glob("demo_*")) == ["demo_0.hdf5", "demo_1.hdf5"]

    drawn.clear()
    frames = render.render_task_file(path, 8, BOTH, quality="fast")
    assert drawn == [2, 3] and not journal.exists()
    with h5py.File(path, "r") as f:
        assert frames == 2 * sum(len(f[f"data/demo_{i}/states"]) + len(f[f"data/demo_{i}/cue/states"]) for i in (2, 3))

    render.render_task_file(copy, 8, BOTH, quality="fast")  # drawn in one go
    interrupted, whole = _images(path), _images(copy)
    assert interrupted.keys() == whole.keys() and interrupted["attrs"] == whole["attrs"]
    assert all(np.array_equal(interrupted[k], whole[k]) for k in whole if k != "attrs")
    assert interrupted[("demo_0", "cue/agentview_rgb")].shape == (12, 8, 8, 3)  # the cue drawn too
    with h5py.File(path, "r") as f:  # stored as a file drawn in one go stores them
        dataset = f["data/demo_3/obs/eye_in_hand_rgb"]
        assert (dataset.compression, dataset.chunks) == ("gzip", (1, 8, 8, 3))


@pytest.mark.parametrize("change", ["size", "quality", "cameras", "source"])
def test_a_journal_drawn_for_something_else_is_not_used(demo_file, drawn, change):
    path, _ = demo_file
    with pytest.raises(Stopped):
        render.render_task_file(path, 8, BOTH, after_demo=_stop_after(2), quality="fast")
    size, cameras, quality = (16 if change == "size" else 8), (["wrist"] if change == "cameras" else BOTH), "fast"
    if change == "quality":
        quality = "reference"
    if change == "source":  # the demo file changed since (collected again, say)
        with h5py.File(path, "a") as f:
            f["data"].attrs["note"] = "changed"
    drawn.clear()
    render.render_task_file(path, size, cameras, quality=quality)
    assert drawn == [0, 1, 2, 3]


def test_a_damaged_journal_entry_is_drawn_again(demo_file, drawn):
    path, _ = demo_file
    with pytest.raises(Stopped):
        render.render_task_file(path, 8, BOTH, after_demo=_stop_after(3), quality="fast")
    journal = path.with_suffix(".render")
    (journal / "demo_1.hdf5").write_bytes(b"torn")
    with h5py.File(journal / "demo_2.hdf5", "a") as f:  # a camera missing
        del f["obs/eye_in_hand_rgb"]
    with h5py.File(journal / "demo_0.hdf5", "a") as f:  # frames of another type
        frames = f["obs/agentview_rgb"][()]
        del f["obs/agentview_rgb"]
        f["obs/agentview_rgb"] = frames.astype(np.float32)
    drawn.clear()
    render.render_task_file(path, 8, BOTH, quality="fast")
    assert drawn == [0, 1, 2, 3]
