"""LeRobot v3.0 export, checked against the documented layout (``lerobot`` needs a torch that
cannot be installed here, so the schema is checked directly)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memobench.data.demo_file import write_task_file
from memobench.data.lerobot import current_checkpoints, export_lerobot

pq = pytest.importorskip("pyarrow.parquet")

from tests.data.test_demos import synthetic_demo  # noqa: E402


def test_current_checkpoint_is_the_one_worked_toward():
    cps = [{"key_frame": 2}, {"key_frame": 4}]
    assert current_checkpoints(cps, 6).tolist() == [0, 0, 0, 1, 1, 1]


@pytest.fixture
def exported(tmp_path):
    source = tmp_path / "hdf5"
    for task_id, instruction, lengths in (("T01-x", "open it", (6, 4)), ("O01-y", "take it", (5,))):
        demos = [synthetic_demo(n, (1, n - 1)) for n in lengths]
        for d in demos:  # the wrist camera too
            d.arrays["obs/eye_in_hand_rgb"] = d.arrays["obs/agentview_rgb"][::-1].copy()
        write_task_file(
            source / f"{task_id}.hdf5",
            {
                "task_id": task_id,
                "family": "temporal",
                "instruction": instruction,
                "seed_base": 1_000_000,
                "attempts": len(demos),
                "total": sum(lengths),
            },
            demos,
        )
    out = tmp_path / "lerobot"
    info = export_lerobot(source, out)
    return out, info


def test_info_and_tasks_follow_the_v3_layout(exported):
    out, info = exported
    assert json.loads((out / "meta/info.json").read_text()) == info
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (3, 15, 2)
    assert info["splits"] == {"train": "0:3"}
    assert info["features"]["observation.images.image"]["dtype"] == "video"
    assert info["features"]["observation.images.image"]["shape"] == [8, 8, 3]
    tasks = pq.read_table(out / "meta/tasks.parquet")
    assert tasks.column("task").to_pylist() == ["take it", "open it"]  # files in name order: O01 first
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["task"]
    stats = json.loads((out / "meta/stats.json").read_text())
    assert stats["action"]["count"] == [15] and len(stats["action"]["mean"]) == 7


def test_frames_episodes_and_videos_line_up(exported):
    import imageio.v3 as iio

    out, _ = exported
    frames = pq.read_table(out / "data/chunk-000/file-000.parquet").to_pydict()
    episodes = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert frames["index"] == list(range(15))
    assert [e["length"] for e in episodes] == [5, 6, 4]
    for e in episodes:
        rows = range(e["dataset_from_index"], e["dataset_to_index"])
        assert {frames["episode_index"][i] for i in rows} == {e["episode_index"]}
        assert [frames["frame_index"][i] for i in rows] == list(range(e["length"]))
        assert e["videos/observation.images.image/to_timestamp"] - e[
            "videos/observation.images.image/from_timestamp"
        ] == pytest.approx(e["length"] / 20)
        key_frames = [c["key_frame"] for c in json.loads(e["memobench/checkpoints"])]
        current = [frames["memory.checkpoint_index"][i] for i in rows]
        assert current == current_checkpoints([{"key_frame": k} for k in key_frames], e["length"]).tolist()
    assert frames["memory.text.fine"][0] == "c" and frames["memory.op"][0] == "storage"
    assert len(frames["observation.state"][0]) == 8 and len(frames["action"][0]) == 7
    for key in ("observation.images.image", "observation.images.wrist_image"):
        video = np.stack(list(iio.imiter(out / f"videos/{key}/chunk-000/file-000.mp4")))
        assert video.shape == (15, 8, 8, 3)


def test_export_command_writes_a_card_and_refuses_a_non_empty_folder(exported, tmp_path):
    from typer.testing import CliRunner

    from memobench.cli import app

    runner = CliRunner(env={"COLUMNS": "250"})
    out = tmp_path / "again"
    result = runner.invoke(app, ["data", "export", str(tmp_path / "hdf5"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    card = (out / "README.md").read_text()
    assert "3 demonstrations of 2 task(s)" in card and "| T01-x | temporal | 2 | 2 | 100% | 10 |" in card
    assert "LeRobot dataset format v3.0" in card
    refused = runner.invoke(app, ["data", "export", str(tmp_path / "hdf5"), "--out", str(out)])
    assert refused.exit_code == 2 and "is not empty" in refused.output
