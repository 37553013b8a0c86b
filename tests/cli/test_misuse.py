"""Misused commands end with a one-line error and exit code 2, before any episode, losing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.evaluation.ledger import LEDGER_FILENAME
from memobench.evaluation.run_folder import RUN_JSON

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


def fails_with(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()  # sweep and certify may have said what they start first
    assert lines[-1].startswith("error: ") and "Traceback" not in result.output, result.output
    assert message in lines[-1], lines[-1]


COMMANDS = {
    "eval": ["eval", "--policy", "noop"],
    "sweep": ["sweep", "--policy", "noop", "--no-report"],
    "certify": ["certify"],
    "collect": ["collect"],
    "annotations": ["annotations", "export"],
}


@pytest.mark.parametrize("selection", ["", ",", " , "])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_task_selection_naming_nothing_is_refused(tmp_path: Path, command: str, selection: str) -> None:
    # '' used to run all 30 tasks, ',' none (exit 0)
    out = "--out" if command in ("collect", "annotations") else "--out-root"
    fails_with([*COMMANDS[command], "--tasks", selection, out, str(tmp_path / "o")], "names no task")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["eval", "sweep", "certify"])
def test_an_out_root_that_is_a_file_is_refused(tmp_path: Path, command: str) -> None:
    path = tmp_path / "a-file"
    path.write_text("mine")
    fails_with([*COMMANDS[command], "--tasks", "T03", "--out-root", str(path)], "cannot use it as a run folder")
    assert path.read_text() == "mine"


def test_collect_into_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("mine")
    fails_with(["collect", "--tasks", "T03", "--out", str(path)], "cannot use it as a dataset folder")
    assert path.read_text() == "mine"


def test_export_into_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("mine")
    fails_with(["data", "export", str(tmp_path), "--out", str(path)], "is a file; choose a new folder")
    assert path.read_text() == "mine"


def _eval(out: Path, *extra: str) -> list[str]:
    return ["eval", "--policy", "noop", "--tasks", "T03", "--out-root", str(out), "--resume", *extra]


def test_resume_with_a_bad_ledger_line_names_file_and_line_and_keeps_the_data(tmp_path: Path) -> None:
    (tmp_path / RUN_JSON).write_text(json.dumps({"protocol": {}, "policy": {}, "tasks": {}, "num_trials_per_task": 1}))
    ledger = tmp_path / LEDGER_FILENAME
    ledger.write_text("not a record\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    fails_with(_eval(tmp_path), f"cannot resume: {ledger}:1: ")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_resume_with_an_unreadable_run_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / RUN_JSON).write_text("{truncated")
    fails_with(_eval(tmp_path), f"cannot resume: {tmp_path / RUN_JSON} is unreadable (JSONDecodeError")
    assert (tmp_path / RUN_JSON).read_text() == "{truncated"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--workers", "0", "--episode-timeout", "5"], "--episode-timeout needs a worker process to kill"),
        (["--workers", "0", "--backend", "ray"], "--backend ray needs --workers 1 or more"),
    ],
)
def test_in_process_runs_refuse_what_needs_a_worker(tmp_path: Path, extra: list[str], message: str) -> None:
    fails_with(_eval(tmp_path / "o", *extra), message)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("where", ["evaluate", "write_summary"])
def test_a_full_disk_is_a_one_line_error_that_says_how_to_go_on(tmp_path: Path, monkeypatch, where: str) -> None:
    """ENOSPC on a ledger append (inside the run) or on the summary files after it."""
    import errno

    from memobench.evaluation import runner as eval_runner
    from memobench.metrics import export

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "o" / LEDGER_FILENAME))

    if where == "evaluate":
        monkeypatch.setattr(eval_runner, "evaluate", full)
    else:
        ran = type("Result", (), {"records": [], "ran": [], "skipped": 0})()
        monkeypatch.setattr(eval_runner, "evaluate", lambda *a, **k: ran)
        monkeypatch.setattr(export, "write_summary", full)
    fails_with(
        ["eval", "--policy", "noop", "--tasks", "T01", "--out-root", str(tmp_path / "o")],
        f"{tmp_path / 'o' / LEDGER_FILENAME}: No space left on device",
    )
