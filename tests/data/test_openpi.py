"""The openpi export (LeRobot v2.1), read back by a reader written from the v2.1 layout the LeRobot
commit openpi pins reads (meta/*.jsonl, per-episode parquet files whose Hugging Face metadata names
the image columns); test_openpi_load.py loads it with a LeRobot release that reads v2.1 where one is
installed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet")

from tests.data.test_lerobot import CUE, write_source  # noqa: E402

from memobench.core.oracle import memory_line  # noqa: E402
from memobench.data.demo_file import read_task_file  # noqa: E402
from memobench.data.openpi import export_openpi  # noqa: E402
from memobench.data.prompt_tokens import estimate_tokens  # noqa: E402


def read_v21(root: Path) -> dict:
    """The dataset as LeRobot v2.1 reads it: info, tasks by index, episodes, their stats and their rows
    (images decoded from the PNG cells the parquet metadata declares as ``Image``)."""
    from PIL import Image

    info = json.loads((root / "meta/info.json").read_text())
    assert info["codebase_version"] == "v2.1"
    lines = {
        name: [json.loads(x) for x in (root / f"meta/{name}.jsonl").read_text().splitlines()]
        for name in ("tasks", "episodes", "episodes_stats")
    }
    tasks = {t["task_index"]: t["task"] for t in lines["tasks"]}
    episodes = sorted(lines["episodes"], key=lambda e: e["episode_index"])
    rows = []
    for e in episodes:
        chunk = e["episode_index"] // info["chunks_size"]
        table = pq.read_table(root / info["data_path"].format(episode_chunk=chunk, episode_index=e["episode_index"]))
        hf = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
        data = table.to_pydict()
        for key, feature in info["features"].items():
            if feature["dtype"] == "image":
                assert hf[key] == {"_type": "Image"}
                data[key] = [np.asarray(Image.open(io.BytesIO(c["bytes"]))) for c in data[key]]
            elif feature["shape"] != [1]:
                assert hf[key]["_type"] == "Sequence" and hf[key]["length"] == feature["shape"][0]
        assert len(data["index"]) == e["length"]
        rows.append(data)
    return {"info": info, "tasks": tasks, "episodes": episodes, "stats": lines["episodes_stats"], "rows": rows}


@pytest.fixture
def source(tmp_path):
    write_source(tmp_path / "hdf5")
    return tmp_path / "hdf5"


def test_the_export_has_the_v21_layout_and_openpis_libero_keys(source, tmp_path):
    out = tmp_path / "openpi"
    info = export_openpi(source, out)
    data = read_v21(out)
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (3, 15, 2)
    assert {"image", "wrist_image", "state", "actions", "task_index"} <= set(data["info"]["features"])
    assert data["info"]["features"]["state"]["shape"] == [8] and data["info"]["features"]["actions"]["shape"] == [7]
    assert data["info"]["features"]["image"]["dtype"] == "image"
    index = [i for r in data["rows"] for i in r["index"]]
    assert index == list(range(15))  # contiguous across episodes, in episode order
    for e, r in zip(data["episodes"], data["rows"], strict=True):
        assert r["frame_index"] == list(range(e["length"]))
        np.testing.assert_allclose(r["timestamp"], np.arange(e["length"]) / info["fps"], atol=1e-6)
        assert set(r["episode_index"]) == {e["episode_index"]}
        assert [data["tasks"][t] for t in r["task_index"]] == [e["tasks"][0]] * e["length"]
        assert r["image"][0].shape == (8, 8, 3) and r["wrist_image"][0].dtype == np.uint8
    demo = read_task_file(source / "O01-y.hdf5")[1][0]  # episode 0: O01-y's demo (files in name order)
    np.testing.assert_array_equal(np.stack(data["rows"][0]["image"]), demo.arrays["obs/agentview_rgb"])  # PNG: exact
    np.testing.assert_allclose(data["rows"][0]["actions"], demo.arrays["actions"], atol=1e-6)
    for s in data["stats"]:
        assert np.array(s["stats"]["image"]["mean"]).shape == (3, 1, 1) and s["stats"]["actions"]["count"] == [
            data["episodes"][s["episode_index"]]["length"]
        ]


def test_cue_frames_are_not_among_the_policys_action_rows(source, tmp_path):
    out = tmp_path / "openpi"
    info = export_openpi(source, out)
    data = read_v21(out)
    demo = read_task_file(source / "T01-x.hdf5")[1][0]  # episode 1, with the cue
    rows = data["rows"][1]
    assert data["episodes"][1]["memobench/cue_length"] == CUE and len(rows["actions"]) == demo.length
    np.testing.assert_allclose(rows["actions"], demo.arrays["actions"], atol=1e-6)
    np.testing.assert_allclose(rows["state"], demo.arrays["robot_states"])
    assert all(any(a) for r in data["rows"] for a in r["actions"])  # no zero-action row
    cue = pq.read_table(out / info["memobench/cue_path"].format(episode_chunk=0, episode_index=1)).to_pydict()
    np.testing.assert_allclose(cue["state"], demo.arrays["cue/robot_states"])


def test_norm_stats_are_openpis_over_the_policys_rows(source, tmp_path):
    out = tmp_path / "openpi"
    export_openpi(source, out)
    norm = json.loads((out / "norm_stats.json").read_text())["norm_stats"]
    assert set(norm) == {"state", "actions"}
    assert all(set(norm[k]) == {"mean", "std", "q01", "q99"} for k in norm)
    actions = np.concatenate([r["actions"] for r in read_v21(out)["rows"]])
    assert len(actions) == 15
    np.testing.assert_allclose(norm["actions"]["mean"], actions.mean(0), atol=1e-6)
    np.testing.assert_allclose(norm["actions"]["std"], actions.std(0), atol=1e-6)
    assert len(norm["state"]["q01"]) == 8 and len(norm["actions"]["q99"]) == 7


def test_oracle_prompts_are_the_harness_lines_and_are_reported_against_the_token_limits(source, tmp_path):
    out = tmp_path / "openpi"
    info = export_openpi(source, out, prompt="oracle-intermediate")
    data = read_v21(out)
    r = data["rows"][0]  # O01-y: key frames 1 and 4, intermediate text "b"
    prompts = [data["tasks"][t] for t in r["task_index"]]
    assert prompts == ["take it\n" + memory_line(["b"] * n) for n in (0, 0, 1, 1, 1)]
    assert set(data["episodes"][0]["tasks"]) == set(prompts)
    report = json.loads((out / "meta/memobench_prompts.json").read_text())
    assert report == info["memobench/prompts"] and report["prompt"] == "oracle-intermediate"
    assert [t["task"] for t in report["tasks"]] == ["O01-y", "T01-x"]
    o01 = report["tasks"][0]
    assert o01["max_tokens_estimate"] == max(estimate_tokens(p) for p in prompts) and o01["fits_pi0"]
    with pytest.raises(ValueError, match="unknown prompt"):
        export_openpi(source, tmp_path / "other", prompt="oracle")


def test_token_estimate_counts_words_digits_and_punctuation():
    assert estimate_tokens("open it") == 2 + 2  # two words, BOS and separator
    assert estimate_tokens("put 12 bowls.\nMemory: nothing done yet.") == 2 + (1 + 2 + 1 + 1) + (
        1 + 1 + 3 + 1
    )  # put 1 2 bowls . Memory : ...
    assert estimate_tokens("a" * 17) == 3 + 2  # a long word in pieces of 8 letters
    long = "pick up the red bowl on the left of the plate and put it in the top drawer of the cabinet " * 3
    assert estimate_tokens(long) > 48


def test_export_command_writes_the_openpi_dataset_its_card_and_the_token_report(source, tmp_path):
    from typer.testing import CliRunner

    from memobench.cli import app

    runner = CliRunner(env={"COLUMNS": "250"})
    out = tmp_path / "openpi"
    args = ["data", "export", str(source), "--out", str(out), "--format", "openpi", "--prompt", "oracle-fine"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "openpi dataset (LeRobot v2.1)" in result.output and "an estimate" in result.output
    assert "O01-y" in result.output and "8 px" in result.output and "render at 224" in result.output
    card = (out / "README.md").read_text()
    assert "LeRobot dataset format v2.1" in card and "The cue is not in the rows" in card
    assert "--format openpi --prompt oracle-fine" in card
    base = ["data", "export", str(source), "--out", str(tmp_path / "x")]
    refused = runner.invoke(app, [*base, "--format", "openpi", "--prompt", "oracle"])
    assert refused.exit_code == 2 and "unknown prompt" in refused.output
    refused = runner.invoke(app, [*base, "--prompt", "oracle-fine"])  # the v3.0 export has every line already
    assert refused.exit_code == 2 and "--prompt is for --format openpi" in refused.output


def test_demos_without_camera_images_are_refused(tmp_path):
    from tests.data.test_demos import synthetic_demo

    from memobench.data.demo_file import write_task_file

    attrs = {"task_id": "O01-y", "family": "object", "instruction": "take it", "seed_base": 1, "attempts": 1}
    demo = synthetic_demo(5, (3,))  # the agent-view camera only
    write_task_file(tmp_path / "hdf5" / "O01-y.hdf5", {**attrs, "total": 5}, [demo])
    with pytest.raises(ValueError, match="lack camera images"):
        export_openpi(tmp_path / "hdf5", tmp_path / "openpi")
