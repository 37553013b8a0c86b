"""The openpi export loads in a LeRobot that reads format v2.1 (what openpi's pinned commit reads):
``LeRobotDataset`` reads it and draws items with action chunks as openpi's data loader asks for them
(``delta_timestamps`` on ``actions``). Skipped where no such LeRobot is installed (0.3.x reads v2.1;
0.4 and later read v3.0); README "Fine-tuning pi0 / pi0.5 with openpi" says how it was run."""

from __future__ import annotations

import pytest

try:
    from lerobot.datasets.lerobot_dataset import CODEBASE_VERSION, LeRobotDataset
except Exception as e:  # not installed, or a torchvision built for another torch
    pytest.skip(f"LeRobot cannot be imported ({type(e).__name__}: {e})", allow_module_level=True)
if CODEBASE_VERSION != "v2.1":
    pytest.skip(f"this LeRobot reads {CODEBASE_VERSION}, not v2.1", allow_module_level=True)

from tests.data.test_lerobot import write_source  # noqa: E402

from memobench.data.openpi import export_openpi  # noqa: E402

HORIZON = 4  # actions per item


def test_lerobot_v21_reads_the_export_with_openpis_keys_and_action_chunks(tmp_path):
    import torch

    source, out = tmp_path / "hdf5", tmp_path / "openpi"
    write_source(source)
    info = export_openpi(source, out, prompt="oracle-fine")
    dataset = LeRobotDataset(
        "memobench/test", root=out, delta_timestamps={"actions": [t / info["fps"] for t in range(HORIZON)]}
    )
    assert (dataset.num_episodes, dataset.num_frames) == (3, 15)
    item = dataset[0]
    assert item["image"].shape == (3, 8, 8) and item["wrist_image"].shape == (3, 8, 8)
    assert item["state"].shape == (8,) and item["actions"].shape == (HORIZON, 7)
    assert item["task"] == "take it\nMemory: nothing done yet."  # openpi's prompt_from_task reads this
    assert dataset[4]["actions_is_pad"].tolist() == [False, True, True, True]  # the chunk stops at the episode's end
    batch = next(iter(torch.utils.data.DataLoader(dataset, batch_size=3)))
    assert batch["actions"].shape == (3, HORIZON, 7)
    assert set(dataset.meta.stats["actions"]) >= {"mean", "std", "min", "max"}
