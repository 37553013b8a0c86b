"""One run at a time per run folder (no simulator)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.core.suite import Suite
from memobench.evaluation.lock import LOCK_FILENAME, RunFolderLocked, run_folder_lock
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_folder import RunFolderError
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.builtin import NoopPolicy


def test_a_second_holder_is_refused_naming_the_first(tmp_path: Path) -> None:
    with run_folder_lock(tmp_path / "run") as path:
        assert path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(RunFolderLocked) as info, run_folder_lock(tmp_path / "run"):
            pass
        assert str(info.value) == (
            f"{tmp_path / 'run'} is in use by another run (pid {os.getpid()}, holding "
            f"{LOCK_FILENAME}); wait for it to finish, or choose another --out-root"
        )
    assert not path.exists()  # released and removed
    with run_folder_lock(tmp_path / "run"):  # free again
        pass


def test_a_killed_holder_leaves_the_folder_free(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from memobench.evaluation.lock import run_folder_lock
        with run_folder_lock(Path({str(tmp_path)!r})):
            print("held", flush=True)
            time.sleep(3600)
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(RunFolderLocked, match=f"pid {holder.pid}"), run_folder_lock(tmp_path):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / LOCK_FILENAME).exists()  # the file stays behind, its lock does not
    with run_folder_lock(tmp_path):
        pass


@pytest.mark.parametrize("make", ["file", "read-only"])
def test_a_folder_that_cannot_be_used_is_a_one_line_error(tmp_path: Path, make: str) -> None:
    if make == "file":
        out = tmp_path / "a-file"
        out.write_text("mine")
    else:
        if os.geteuid() == 0:
            pytest.skip("root may write anywhere")
        tmp_path.chmod(0o500)
        out = tmp_path / "run"
    try:
        with (
            pytest.raises(RunFolderError, match=r"^--out-root .+: cannot use it as a run folder \(.+\)$"),
            run_folder_lock(out),
        ):
            pass
    finally:
        tmp_path.chmod(0o700)
    if make == "file":
        assert out.read_text() == "mine"


def test_evaluate_refuses_a_folder_another_run_holds_before_touching_it(tmp_path: Path) -> None:
    task = Suite.load().get("T03-check-all-drawers")
    request = RunRequest(
        tasks=[task],
        num_trials_per_task=1,
        protocol=Protocol(horizon=5),
        out_root=tmp_path,
        policy={"name": "noop", "adapter_kwargs": {}},
        resume=True,
    )
    with run_folder_lock(tmp_path):
        with pytest.raises(RunFolderLocked):
            evaluate(request, NoopPolicy())
        assert sorted(p.name for p in tmp_path.iterdir()) == [LOCK_FILENAME]  # no run.json, no ledger


@pytest.mark.parametrize(
    "command",
    [
        ["eval", "--policy", "noop", "--resume"],
        ["sweep", "--policy", "noop", "--replan-steps", "5", "--no-report"],
        ["certify"],
    ],
)
def test_the_commands_give_a_one_line_error_with_exit_2(tmp_path: Path, command: list[str]) -> None:
    folder = tmp_path / "run"
    # sweep writes <root>/<label>-r5, certify <root>/<policy>: lock the folder the command writes
    locked = {"eval": folder, "sweep": folder / "noop-r5", "certify": folder / "expert"}[command[0]]
    with run_folder_lock(locked):
        result = CliRunner().invoke(
            app, [*command, "--tasks", "T03", "--out-root", str(folder)], env={"COLUMNS": "400", "NO_COLOR": "1"}
        )
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1].startswith(f"error: {locked} is in use by another run")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_lock_that_is_not_a_regular_file_is_refused_and_its_target_untouched(tmp_path: Path, kind: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    if kind == "symlink":
        (run / LOCK_FILENAME).symlink_to(target)
    else:
        os.mkfifo(run / LOCK_FILENAME)
    with pytest.raises(RunFolderError) as info, run_folder_lock(run):
        pass
    assert f"{run / LOCK_FILENAME} is not a regular file" in str(info.value)
    assert target.read_text() == "keep me\n"
    assert (run / LOCK_FILENAME).is_symlink() if kind == "symlink" else (run / LOCK_FILENAME).is_fifo()
