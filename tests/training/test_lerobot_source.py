"""``memobench train --data`` on a ``memobench data export`` folder: the same batches as from the HDF5 it came from.

The synthetic collect folder carries made-up state features (tests/training/synthetic.py), so
exporting with ``--environment-state`` needs no simulator.
"""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")
pq = pytest.importorskip("pyarrow.parquet", reason="reading a LeRobot export needs pyarrow")

from tests.training.synthetic import write_dataset  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from memobench.cli import app  # noqa: E402
from memobench.data.lerobot import ENVIRONMENT_STATE, export_lerobot  # noqa: E402
from memobench.data.state_features import ROBOT_DIM  # noqa: E402
from memobench.training.checkpoint_files import last_checkpoint  # noqa: E402
from memobench.training.dataset import BatchSource, DataOptions, index_demos  # noqa: E402
from memobench.training.embedding import HashEmbedder  # noqa: E402
from memobench.training.lerobot_source import LeRobotSource, index_episodes  # noqa: E402
from memobench.training.trainer import TrainSettings, train  # noqa: E402


@pytest.fixture
def folders(tmp_path):
    """(collect folder, its LeRobot export with the environment state)."""
    data = tmp_path / "data"
    write_dataset(data, data / "state-features", tasks=2, demos=3)
    export_lerobot(data, tmp_path / "lerobot", environment_state=data / "state-features")
    return data, tmp_path / "lerobot"


def test_the_export_carries_the_masked_scene_vector_of_the_policys_steps(folders) -> None:
    data, export = folders
    info = json.loads((export / "meta/info.json").read_text())
    assert info["features"][ENVIRONMENT_STATE]["shape"] == [104]
    rows = pq.read_table(export / "data/chunk-000/file-000.parquet").to_pydict()
    episode = np.array(rows["episode_index"])
    env = np.array(rows[ENVIRONMENT_STATE])[episode == 0]
    episodes = pq.read_table(export / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    with h5py.File(data / "state-features" / "T01-synthetic.state.hdf5") as f:
        np.testing.assert_array_equal(env, f["demo_0/state"][:, ROBOT_DIM:])  # no cue rows before them
    assert episodes[0]["memobench/cue_length"] == 12


@pytest.mark.parametrize("options", [DataOptions(stride=3, chunk=4), DataOptions(4, 6, "fine", True, True)])
def test_batches_from_the_export_equal_those_from_the_hdf5(folders, options) -> None:
    data, export = folders
    hdf5 = BatchSource(index_demos(data, data / "state-features"), options, batch_size=4, seed=5)
    lerobot = LeRobotSource(export, options, batch_size=4, seed=5)
    for b in range(4):
        for a, e in zip(hdf5.items(b), lerobot.items(b), strict=True):
            for key in ("state", "steps", "actions", "action_mask", "cue"):
                np.testing.assert_array_equal(getattr(a, key), getattr(e, key), err_msg=key)
            assert a.prompts == e.prompts and a.memory_texts == e.memory_texts
    hdf5.close()


def test_training_from_either_ends_with_the_same_weights(tmp_path, folders) -> None:
    from safetensors.torch import load_file

    data, export = folders
    settings = TrainSettings(policy="bc-gru", align="contrastive", steps=3, batch_size=3, hidden=16, chunk=4)
    settings = TrainSettings(**(settings.__dict__ | {"embedder": "hash"}))
    train(settings, data, tmp_path / "a", embedder=HashEmbedder(8))
    train(settings, export, tmp_path / "b", embedder=HashEmbedder(8))
    a, b = (load_file(last_checkpoint(tmp_path / o) / "model.safetensors") for o in ("a", "b"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_an_export_without_the_environment_state_or_in_rgb_is_refused(tmp_path, folders) -> None:
    data, export = folders
    export_lerobot(data, tmp_path / "plain")
    with pytest.raises(ValueError, match="no observation.environment_state .* --environment-state$"):
        LeRobotSource(tmp_path / "plain", DataOptions(), 2, 0)
    with pytest.raises(ValueError, match="no videos of both cameras for rgb mode: render the demos, then export"):
        LeRobotSource(export, DataOptions(obs="rgb"), 2, 0)


def smooth_frames(path, side: int) -> None:
    """Replace a rendered file's random frames with flat ones whose grey level tells the frame (H.264 keeps those)."""
    with h5py.File(path, "r+") as f:
        for group in f["data"].values():
            for prefix in ("obs", "cue"):
                for camera, key in enumerate(("agentview_rgb", "eye_in_hand_rgb")):
                    frames = group[f"{prefix}/{key}"]
                    levels = (20 + 9 * np.arange(len(frames)) + 100 * camera + (60 if prefix == "cue" else 0)) % 230
                    frames[...] = np.broadcast_to(levels[:, None, None, None], (len(frames), side, side, 3))


def test_rgb_batches_from_the_export_videos_match_the_hdf5_frames(tmp_path) -> None:
    data, side = tmp_path / "data", 16
    write_dataset(data, data / "state-features", tasks=2, demos=2, image_size=side)
    for path in data.glob("*.hdf5"):
        smooth_frames(path, side)
    export_lerobot(data, tmp_path / "lerobot")
    options = DataOptions(stride=3, chunk=4, obs="rgb")
    hdf5 = BatchSource(index_demos(data, data / "unused"), options, batch_size=3, seed=2)
    lerobot = LeRobotSource(tmp_path / "lerobot", options, batch_size=3, seed=2)
    for b in range(3):
        for a, e in zip(hdf5.items(b), lerobot.items(b), strict=True):
            for key in ("state", "steps", "actions", "action_mask", "cue"):
                np.testing.assert_array_equal(getattr(a, key), getattr(e, key), err_msg=key)
            for key in ("images", "cue_images"):
                got, want = getattr(e, key).astype(float), getattr(a, key).astype(float)
                assert got.shape == want.shape and np.abs(got - want).max(initial=0) <= 3, key  # lossy, same frames
    hdf5.close()
    result = train(
        TrainSettings(policy="bc-gru", obs="rgb", steps=2, batch_size=2, hidden=16, embedder="hash"),
        tmp_path / "lerobot",
        tmp_path / "out",
    )
    assert (
        result["step"] == 2
        and json.loads((tmp_path / "out" / "config.json").read_text())["policy"]["image_size"] == side
    )


def test_the_command_detects_the_layout_and_refuses_anything_else(tmp_path, folders) -> None:
    data, export = folders
    runner = CliRunner(env={"COLUMNS": "250"})
    base = ["train", "--embedder", "hash", "--steps", "1", "--batch-size", "2", "--hidden", "16"]
    done = runner.invoke(app, [*base, "--data", str(export), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "demos.parquet").write_text("")
    refused = runner.invoke(app, [*base, "--data", str(tmp_path / "other"), "--out", str(tmp_path / "out2")])
    assert refused.exit_code == 2 and "neither *.hdf5 of memobench collect nor a LeRobot export" in refused.output
    card = runner.invoke(app, ["data", "export", str(data), "--out", str(tmp_path / "x"), "--environment-state"])
    assert card.exit_code == 0, card.output
    assert "`observation.environment_state` (104 floats per frame)" in (tmp_path / "x" / "README.md").read_text()


def test_an_export_whose_cue_is_in_its_rows_is_refused(folders) -> None:
    # Exports written before the cue left the rows have no memobench/cue_length: their rows begin with the cue.
    _, export = folders
    path = export / "meta/episodes/chunk-000/file-000.parquet"
    pq.write_table(pq.read_table(path).drop(["memobench/cue_length"]), path)
    with pytest.raises(ValueError, match="export it again"):
        index_episodes(export, "state")


@pytest.mark.parametrize("how", ["template leaves the folder", "template not text", "data file a symlink", "a FIFO"])
def test_an_export_that_points_outside_itself_is_refused(tmp_path, folders, how) -> None:
    """info.json's path templates and the files they name are untrusted: training reads only
    regular files inside the export."""
    import os

    _, export = folders
    info_path = export / "meta/info.json"
    info = json.loads(info_path.read_text())
    data = export / "data/chunk-000/file-000.parquet"
    if how == "template leaves the folder":
        (tmp_path / "secret.parquet").write_bytes(data.read_bytes())
        info["data_path"] = "../secret.parquet"
    elif how == "template not text":
        info["data_path"] = ["data"]
    elif how == "data file a symlink":
        data.rename(tmp_path / "elsewhere.parquet")
        data.symlink_to(tmp_path / "elsewhere.parquet")
    else:
        data.unlink()
        os.mkfifo(data)
    info_path.write_text(json.dumps(info))
    with pytest.raises(ValueError, match="inside the export|a symlink in the export|not a regular file"):
        index_episodes(export, "state")
