"""LeRobot v3.0 export, checked against LeRobot 0.4.x's layout directly (test_lerobot_load.py
loads it with LeRobot itself where that is installed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from memobench.core.oracle import memory_line
from memobench.data.demo_file import write_task_file
from memobench.data.lerobot import completed_mask, current_checkpoints, export_lerobot
from memobench.data.lerobot_stats import QUANTILE_KEYS

pq = pytest.importorskip("pyarrow.parquet")

from tests.data.test_demos import synthetic_demo  # noqa: E402


def test_current_checkpoint_is_the_one_worked_toward():
    cps = [{"key_frame": 2}, {"key_frame": 4}]
    assert current_checkpoints(cps, 6).tolist() == [0, 0, 0, 1, 1, 1]


def test_a_checkpoint_counts_as_completed_from_the_frame_after_its_key_frame():
    mask = completed_mask([{"key_frame": 2}, {"key_frame": None}], 4)
    assert mask.tolist() == [[False, False], [False, False], [False, False], [True, False]]


CUE = 3  # frames of the cue given to the first demo of T01-x


def with_cue(demo, frames: int):
    """The demo with a cue of ``frames`` frames (states and both cameras' images)."""
    rng = np.random.default_rng(1)
    demo.arrays["cue/robot_states"] = rng.normal(size=(frames, 8)).astype(np.float32)
    demo.arrays["cue/states"] = rng.normal(size=(frames, 30))
    for camera in ("agentview_rgb", "eye_in_hand_rgb"):
        demo.arrays[f"cue/{camera}"] = rng.integers(0, 255, (frames, 8, 8, 3), dtype=np.uint8)
    demo.attrs["policy_start"] = frames
    return demo


def write_source(source, *, copies: int = 1):
    """Two task files (T01-x: demos of 6 and 4 frames, the first with a cue; O01-y: one of 5), ``copies`` times."""
    for task_id, instruction, lengths in (("T01-x", "open it", (6, 4)), ("O01-y", "take it", (5,))):
        demos = [synthetic_demo(n, (1, n - 1)) for n in lengths * copies]
        for d in demos:  # the wrist camera too
            d.arrays["obs/eye_in_hand_rgb"] = d.arrays["obs/agentview_rgb"][::-1].copy()
        if task_id == "T01-x":
            with_cue(demos[0], CUE)
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


@pytest.fixture
def exported(tmp_path):
    source = tmp_path / "hdf5"
    write_source(source)
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


def test_stats_hold_lerobots_full_set_merged_from_the_episodes(exported):
    out, info = exported
    stats = json.loads((out / "meta/stats.json").read_text())
    full_set = {"min", "max", "mean", "std", "count", *QUANTILE_KEYS}
    assert set(QUANTILE_KEYS) == {"q01", "q10", "q50", "q90", "q99"}
    numeric = {k for k, f in info["features"].items() if f["dtype"] != "string"}
    assert set(stats) == numeric and all(set(s) == full_set for s in stats.values())
    frames = pq.read_table(out / "data/chunk-000/file-000.parquet")
    actions = np.array(frames.column("action").to_pylist())
    assert stats["action"]["count"] == [15]  # the policy's rows only
    np.testing.assert_allclose(stats["action"]["mean"], actions.mean(0), atol=1e-6)  # pooled: exact
    np.testing.assert_allclose(stats["action"]["std"], actions.std(0), atol=1e-6)
    assert np.all(np.array(stats["action"]["q01"]) <= np.array(stats["action"]["q99"]))
    image = stats["observation.images.image"]
    assert np.array(image["mean"]).shape == (3, 1, 1) and np.array(image["q50"]).shape == (3, 1, 1)
    assert np.min(image["min"]) >= 0 and np.max(image["max"]) <= 1
    episodes = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    for e in episodes:
        assert e["stats/action/count"] == [e["length"]]
        assert {f"stats/action/{k}" for k in full_set} <= set(e)
        assert np.array(e["stats/observation.images.image/q10"]).shape == (3, 1, 1)


def test_frames_episodes_and_videos_line_up(exported):
    import imageio.v3 as iio

    out, _ = exported
    frames = pq.read_table(out / "data/chunk-000/file-000.parquet").to_pydict()
    episodes = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert frames["index"] == list(range(15))
    assert [e["length"] for e in episodes] == [5, 6, 4]
    assert [e["memobench/cue_length"] for e in episodes] == [0, CUE, 0]
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


def test_cue_frames_are_not_among_the_policys_action_rows(exported, tmp_path):
    """The episode with a cue: its rows are exactly the demo's steps; the cue lies beside them."""
    import imageio.v3 as iio

    from memobench.data.demo_file import read_task_file

    out, info = exported
    frames = pq.read_table(out / "data/chunk-000/file-000.parquet").to_pydict()
    rows = [i for i, e in enumerate(frames["episode_index"]) if e == 1]  # T01-x's first demo, with the cue
    _, (demo, _) = read_task_file(tmp_path / "hdf5" / "T01-x.hdf5")
    assert len(rows) == demo.length
    np.testing.assert_allclose([frames["action"][i] for i in rows], demo.arrays["actions"], atol=1e-6)
    np.testing.assert_allclose([frames["observation.state"][i] for i in rows], demo.arrays["robot_states"])
    assert all(any(a) for a in frames["action"]) and "memory.phase" not in frames
    cue = pq.read_table(out / info["memobench/cue_path"].format(episode_chunk=0, episode_index=1)).to_pydict()
    np.testing.assert_allclose(cue["observation.state"], demo.arrays["cue/robot_states"])
    assert cue["frame_index"] == list(range(CUE))
    for key in ("observation.images.image", "observation.images.wrist_image"):
        path = out / info["memobench/cue_video_path"].format(episode_chunk=0, video_key=key, episode_index=1)
        assert np.stack(list(iio.imiter(path))).shape == (CUE, 8, 8, 3)
    assert not (out / info["memobench/cue_path"].format(episode_chunk=0, episode_index=0)).exists()  # no cue


def test_memory_so_far_is_the_harness_oracle_line_of_the_completed_checkpoints(exported):
    out, info = exported
    frames = pq.read_table(out / "data/chunk-000/file-000.parquet").to_pydict()
    assert info["features"]["memory.completed"]["shape"] == [2]
    rows = [i for i, e in enumerate(frames["episode_index"]) if e == 0]  # O01-y: 5 frames, key frames 1 and 4
    completed = [frames["memory.completed"][i] for i in rows]
    assert completed == [[False, False], [False, False], [True, False], [True, False], [True, False]]
    texts = {"coarse": "a", "intermediate": "b", "fine": "c"}
    for level, text in texts.items():
        want = [memory_line([text] * sum(done)) for done in completed]
        assert [frames[f"memory.so_far.{level}"][i] for i in rows] == want
    assert frames["memory.so_far.fine"][rows[2]] == "Memory: c."
    assert {frames["memory.binding"][i] for i in rows} == {'{"x": "y"}'}
    assert [frames["memory.checkpoint_index"][i] for i in rows] == [0, 0, 1, 1, 1]


def test_files_are_cut_at_their_size_limit(tmp_path):
    import imageio.v3 as iio

    source, out = tmp_path / "hdf5", tmp_path / "lerobot"
    write_source(source)
    info = export_lerobot(source, out, data_file_mb=0, video_file_mb=0)  # every episode starts a new file
    episodes = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    for e in episodes:
        data = pq.read_table(out / info["data_path"].format(chunk_index=0, file_index=e["data/file_index"]))
        assert data.column("index").to_pylist() == list(range(e["dataset_from_index"], e["dataset_to_index"]))
        key = "observation.images.image"
        assert e[f"videos/{key}/file_index"] == e["episode_index"] and e[f"videos/{key}/from_timestamp"] == 0
        path = out / info["video_path"].format(video_key=key, chunk_index=0, file_index=e["episode_index"])
        assert len(list(iio.imiter(path))) == e["length"]


def test_export_memory_does_not_grow_with_the_number_of_demos(tmp_path):
    """Peak Python-heap memory (tracemalloc: numpy buffers included) for 2 and 8 copies of the demos."""
    import tracemalloc

    def peak(copies: int) -> int:
        source = tmp_path / f"hdf5-{copies}"
        write_source(source, copies=copies)
        tracemalloc.start()
        export_lerobot(source, tmp_path / f"out-{copies}")
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(2), peak(8)
    assert large < 1.5 * small, (small, large)


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


def test_tasks_of_one_checkpoint_export_a_scalar_completed_mask(tmp_path):
    # Real case: O01 alone has one checkpoint, so the mask is one column wide ([1] is a scalar feature).
    source = tmp_path / "hdf5"
    demos = [synthetic_demo(5, (3,)), synthetic_demo(4, (2,))]
    for d in demos:
        d.arrays["obs/eye_in_hand_rgb"] = d.arrays["obs/agentview_rgb"].copy()
    attrs = {"task_id": "O01-y", "family": "object", "instruction": "take it", "seed_base": 1, "attempts": 2}
    write_task_file(source / "O01-y.hdf5", {**attrs, "total": 9}, demos)
    export_lerobot(source, tmp_path / "lerobot")
    info = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())
    assert info["features"]["memory.completed"]["shape"] == [1]
    (data,) = (tmp_path / "lerobot" / "data").rglob("*.parquet")
    completed = pq.read_table(data).column("memory.completed").to_pylist()
    assert completed == [False] * 4 + [True] + [False] * 3 + [True]  # after each demo's key frame


def test_a_demo_with_a_nan_is_refused_before_anything_is_written(tmp_path):
    import h5py

    source, out = tmp_path / "source", tmp_path / "out"
    write_source(source)
    with h5py.File(source / "O01-y.hdf5", "r+") as f:
        f["data/demo_0/actions"][2, 3] = np.nan
    with pytest.raises(ValueError, match=r"O01-y\.hdf5: demo_0: actions row 2 is not finite"):
        export_lerobot(source, out)
    assert not out.exists() or not any(out.rglob("*.parquet"))
