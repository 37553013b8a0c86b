"""The LeRobot export loads in LeRobot itself: ``LeRobotDataset`` reads it and a DataLoader draws a
batch with action chunks (``delta_timestamps``). Skipped where LeRobot is not installed (it is not a
dependency; README "Demonstrations" says how to install it beside a CPU torch)."""

from __future__ import annotations

import pytest

try:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
except Exception as e:  # not installed (ImportError), or a torchvision built for another torch (RuntimeError)
    pytest.skip(
        f"LeRobot cannot be imported ({type(e).__name__}: {e}); README: Demonstrations", allow_module_level=True
    )

from tests.data.test_lerobot import write_source  # noqa: E402

from memobench.data.lerobot import FPS, export_lerobot  # noqa: E402

CHUNK = 4  # actions per item


def test_lerobot_dataset_draws_batches_with_action_chunks(tmp_path):
    import torch

    source, out = tmp_path / "hdf5", tmp_path / "lerobot"
    write_source(source)
    export_lerobot(source, out)
    dataset = LeRobotDataset(
        "memobench/test",
        root=out,
        delta_timestamps={"action": [i / FPS for i in range(CHUNK)]},
        # LeRobot's default decoder: torchcodec where installed. Its "pyav" path needs
        # torchvision.io.VideoReader, which torchvision 0.26 and later no longer have.
    )
    assert (dataset.num_episodes, dataset.num_frames) == (3, 15)
    assert {"q01", "q99"} <= set(dataset.meta.stats["action"])
    loader = torch.utils.data.DataLoader(dataset, batch_size=3, shuffle=False)
    batch = next(iter(loader))
    assert batch["action"].shape == (3, CHUNK, 7)
    assert batch["action_is_pad"].shape == (3, CHUNK)
    assert batch["observation.images.image"].shape == (3, 3, 8, 8)
    assert batch["observation.images.wrist_image"].shape == (3, 3, 8, 8)
    assert batch["task"] == ["take it"] * 3
    assert batch["memory.so_far.fine"][0] == "Memory: nothing done yet."
    last = dataset[4]  # the last frame of the first episode: the chunk runs past its end and is padded
    assert last["action_is_pad"].tolist() == [False, True, True, True]
