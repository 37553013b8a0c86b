"""``memobench train`` on the command line: a run, its resume, and misuse as exit 2 with one line."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import write_dataset  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from memobench.cli import app  # noqa: E402

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


@pytest.fixture
def data(tmp_path):
    write_dataset(tmp_path / "data", tmp_path / "data" / "state-features")
    return tmp_path / "data"


def args(data, out, *more: str) -> list[str]:
    base = ["train", "--policy", "bc-transformer", "--obs", "state", "--align", "framewise", "--lambda", "0.5"]
    return [*base, "--data", str(data), "--out", str(out), "--embedder", "hash", "--hidden", "16", *more]


def test_trains_then_resumes_to_more_steps(tmp_path, data) -> None:
    out = tmp_path / "out"
    first = runner.invoke(app, args(data, out, "--steps", "2", "--checkpoint-every", "1"))
    assert first.exit_code == 0, first.output
    assert "step 2" in first.output and '--policy checkpoint --adapter-kwargs \'{"path": ' in first.output
    second = runner.invoke(app, args(data, out, "--steps", "3"))
    assert second.exit_code == 0, second.output
    with (out / "train_log.csv").open() as f:
        assert [r["step"] for r in csv.DictReader(f)] == ["1", "2", "3"]
    third = runner.invoke(app, args(data, out, "--steps", "3"))  # nothing left to train
    assert third.exit_code == 0 and "already trained to step 3" in third.output, third.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--policy", "bc-lstm"], "--policy must be one of bc-mlp, bc-gru, bc-transformer"),
        (["--align", "cosine"], "--align must be one of none, semantic, contrastive, framewise"),
        (["--text-level", "medium"], "text level must be one of coarse, intermediate, fine"),
        (["--obs", "depth"], "--obs must be one of state, rgb"),
        (["--obs", "rgb"], "no camera frames for rgb mode: run memobench data render first"),
        (["--embedder", "bert"], "unknown text embedder 'bert'"),
    ],
)
def test_bad_choices_are_one_line_errors(tmp_path, data, change, message) -> None:
    result = runner.invoke(app, [*args(data, tmp_path / "out"), *change])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1].startswith("error: ") and message in result.output
    assert not (tmp_path / "out" / "checkpoint").exists()


def test_a_folder_without_demos_is_refused(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, args(tmp_path / "empty", tmp_path / "out"))
    assert result.exit_code == 2 and "no demo files" in result.output


def test_resuming_with_another_loss_is_refused_and_keeps_the_run(tmp_path, data) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, args(data, out, "--steps", "1")).exit_code == 0
    result = runner.invoke(app, [*args(data, out, "--steps", "2"), "--align", "semantic"])
    assert result.exit_code == 2 and "align was 'framewise' in this run folder, now 'semantic'" in result.output
    assert '"align": "framewise"' in (out / "config.json").read_text()
