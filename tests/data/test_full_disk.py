"""A full disk in the data commands: one line naming the file, exit 2, nothing of the user's lost,
and the same command can run again (no simulator)."""

from __future__ import annotations

import errno
import os

import pytest
from tests.data.test_lerobot import write_source
from tests.data.test_outcomes import task_file
from typer.testing import CliRunner

from memobench.cli import app

runner = CliRunner(env={"COLUMNS": "250"})


def no_space(path):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    return full


def one_line_error(result, *messages: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    last = " ".join(result.output.split()).split("error: ")[-1]
    assert all(m in last for m in messages), last


def test_export_on_a_full_disk_removes_its_half_export_and_can_run_again(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    source, out = tmp_path / "hdf5", tmp_path / "lerobot"
    write_source(source)
    before = {p.name: p.read_bytes() for p in source.iterdir()}
    real = pq.ParquetWriter.write_table
    calls = []

    def write_then_fill(self, *args, **kwargs):  # the first table lands, the disk fills on the next
        calls.append(1)
        if len(calls) > 1:
            no_space(out / "data/chunk-000/file-000.parquet")()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", write_then_fill)
    result = runner.invoke(app, ["data", "export", str(source), "--out", str(out)])
    one_line_error(result, "No space left on device", f"the partial export in {out} was removed", str(source))
    assert not out.exists() and {p.name: p.read_bytes() for p in source.iterdir()} == before
    monkeypatch.setattr(pq.ParquetWriter, "write_table", real)
    again = runner.invoke(app, ["data", "export", str(source), "--out", str(out)])
    assert again.exit_code == 0, again.output


def test_outcomes_on_a_full_disk_keep_the_earlier_file_whole(tmp_path, monkeypatch):
    folder, out = tmp_path / "d", tmp_path / "outcomes.json"
    task_file(folder, "T", 3, [2])
    assert runner.invoke(app, ["data", "outcomes", str(folder), "--out", str(out)]).exit_code == 0
    earlier = out.read_bytes()
    monkeypatch.setattr(os, "fsync", no_space(out))  # the new file's bytes cannot be stored
    result = runner.invoke(app, ["data", "outcomes", str(folder), "--out", str(out), "--update"])
    one_line_error(result, f"{out}: cannot write it (No space left on device); any earlier file there is kept")
    assert out.read_bytes() == earlier and sorted(p.name for p in tmp_path.iterdir()) == ["d", "outcomes.json"]


@pytest.mark.parametrize("command", ["render", "features"])
def test_render_and_features_on_a_full_disk_name_the_file_in_one_line(tmp_path, monkeypatch, command):
    from memobench.data import render, state_features

    folder = tmp_path / "d"
    task_file(folder, "T01-check-top-drawer", 2, [0, 1])
    before = (folder / "T01-check-top-drawer.hdf5").read_bytes()
    target = render if command == "render" else state_features
    name = "render_task_file" if command == "render" else "featurise_task_file"
    monkeypatch.setattr(target, name, no_space(folder / "T01-check-top-drawer.render"))
    result = runner.invoke(app, ["data", command, str(folder), "--workers", "0"])
    one_line_error(result, "No space left on device", "T01-check-top-drawer")
    assert (folder / "T01-check-top-drawer.hdf5").read_bytes() == before


def test_collect_on_a_full_disk_says_the_finished_attempts_are_kept(tmp_path, monkeypatch):
    from memobench.data import jobs

    monkeypatch.setattr(jobs, "collect_dataset", no_space(tmp_path / "d" / "T03.attempts" / "7.hdf5"))
    result = runner.invoke(app, ["collect", "--tasks", "T03", "--out", str(tmp_path / "d"), "--workers", "0"])
    one_line_error(result, "7.hdf5: No space left on device; the attempts finished are kept in", "run the same command")
