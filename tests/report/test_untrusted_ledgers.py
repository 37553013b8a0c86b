"""A report writes only inside ``--out``, whatever task ids a ledger or run.json holds."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tests.report.synthetic_runs import record, write_run
from typer.testing import CliRunner

from memobench.cli import app
from memobench.report import runs as runs_module
from memobench.report.build import build_report
from memobench.report.paths import inside
from memobench.report.runs import ReportError


def crafted_run(folder: Path, bad_task_id: str, list_it: bool) -> Path:
    """A run whose second ledger line has task id ``bad_task_id`` (listed in run.json if ``list_it``)."""
    good = record("T01-x", 0, "SU", 2)
    bad = good.model_copy(update={"task_id": bad_task_id, "episode": 1})
    write_run(folder, [good, bad])
    manifest = json.loads((folder / "run.json").read_text())
    manifest["tasks"] = {"T01-x": "hash", **({bad_task_id: "hash"} if list_it else {})}
    (folder / "run.json").write_text(json.dumps(manifest))
    return folder


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("bad", ["../../escaped", "ABSOLUTE", "T02-not-in-this-run"])
def test_a_task_id_not_of_the_run_is_refused(tmp_path, bad):
    bad = str(tmp_path / "escaped") if bad == "ABSOLUTE" else bad
    folder = crafted_run(tmp_path / "runs" / "a", bad, list_it=False)
    before = files_under(tmp_path)
    with pytest.raises(ReportError) as err:
        build_report([folder], tmp_path / "deep" / "out")
    assert f"{folder / 'ledger.jsonl'}:2: task id {bad!r} is not a task of this run" in str(err.value)
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("bad", ["../../escaped", "ABSOLUTE", "t01-lower", "T01-x/../../up"])
def test_a_malformed_task_id_in_run_json_is_refused(tmp_path, bad):
    bad = str(tmp_path / "escaped") if bad == "ABSOLUTE" else bad
    folder = crafted_run(tmp_path / "runs" / "a", bad, list_it=True)
    with pytest.raises(ReportError, match=f"run.json: {bad!r} in 'tasks' is not a task id"):
        build_report([folder], tmp_path / "out")


def test_cli_names_ledger_line_and_task_and_exits_2(tmp_path):
    folder = crafted_run(tmp_path / "runs" / "a", "../../escaped", list_it=False)
    result = CliRunner().invoke(app, ["report", str(folder), "--out", str(tmp_path / "deep" / "out")])
    assert result.exit_code == 2
    squeezed = "".join(result.output.split())  # rich wraps long words anywhere
    assert "ledger.jsonl:2:taskid'../../escaped'isnotataskofthisrun" in squeezed
    assert not (tmp_path / "escaped.png").exists() and not (tmp_path / "deep").exists()


def test_the_path_guard_holds_even_if_the_task_check_is_bypassed(tmp_path, monkeypatch):
    """Defence in depth: the writers check their final paths themselves."""
    monkeypatch.setattr(runs_module, "check_task_ids", lambda *args: None)
    outside = tmp_path / "escaped"
    folder = crafted_run(tmp_path / "runs" / "a", str(outside), list_it=False)
    with pytest.raises(ReportError, match="outside the report folder"):
        build_report([folder], tmp_path / "out")
    assert not outside.with_suffix(".png").exists() and not outside.with_suffix(".pdf").exists()


def test_inside_resolves_dots_absolute_paths_and_symlinks(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert inside(out, "figures", "prefix", "T01-x.png") == out / "figures" / "prefix" / "T01-x.png"
    assert inside(out, "figures", "..", "index.html") == out / "figures" / ".." / "index.html"
    (out / "link").symlink_to(tmp_path)
    for parts in (("..", "x.png"), ("figures", "..", "..", "x.png"), ("/etc/passwd",), ("link", "x.png")):
        with pytest.raises(ReportError, match="outside the report folder"):
            inside(out, *parts)


MARKUP = '<script>alert(1)</script><img src=x onerror="alert(2)">'


@pytest.mark.filterwarnings("ignore:No artists with labels")  # one episode: a figure with no curve
def test_markup_in_run_json_reaches_the_page_escaped(tmp_path):
    """Every run field the page shows (condition label from the policy's name, seed, horizon, folder
    name, the task's id) carries markup; the page holds it only as text."""
    folder = write_run(tmp_path / "runs" / f"a{MARKUP.replace('/', '_')}", [record("T01-x", 0, "SU", 2)])
    manifest = json.loads((folder / "run.json").read_text())
    manifest["policy"]["name"] = MARKUP
    manifest["protocol"]["seed"] = MARKUP
    manifest["protocol"]["horizon"] = MARKUP
    (folder / "run.json").write_text(json.dumps(manifest))
    build_report([folder], tmp_path / "out", videos=False)
    page = (tmp_path / "out" / "index.html").read_text()
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("link", ["/dev/zero", "/etc/hostname"])
def test_a_run_json_that_links_out_is_refused_without_reading_it(tmp_path, link):
    folder = write_run(tmp_path / "runs" / "a", [record("T01-x", 0, "SU", 2)])
    (folder / "run.json").unlink()
    (folder / "run.json").symlink_to(link)
    with pytest.raises(ReportError, match="is not a regular file"):
        build_report([folder], tmp_path / "out", videos=False)


def test_an_oversized_run_json_is_refused(tmp_path, monkeypatch):
    from memobench.evaluation import regular_files

    folder = write_run(tmp_path / "runs" / "a", [record("T01-x", 0, "SU", 2)])
    monkeypatch.setattr(regular_files, "METADATA_LIMIT", 100)
    monkeypatch.setattr(regular_files.read_json_file, "__defaults__", (100,))
    with pytest.raises(ReportError, match="more than the 100"):
        build_report([folder], tmp_path / "out", videos=False)


def test_a_symlinked_video_is_not_copied_into_the_report(tmp_path):
    """A run folder's videos/... may link anywhere: the report copies regular files only."""
    secret = tmp_path / "secret.txt"
    secret.write_text("private key\n")
    folder = write_run(tmp_path / "runs" / "a", [record("T01-x", 0, "SU", 2)])
    videos = folder / "videos" / "T01-x"
    videos.mkdir(parents=True)
    (videos / "T01-x_success_ep000_seed7.mp4").symlink_to(secret)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "T01-x_failure_ep000_seed7.mp4").write_text("also private\n")
    (videos / "linked").symlink_to(tmp_path / "elsewhere")
    (folder / "videos" / "T01-x" / "T01-x_failure_ep001_seed8.mp4").symlink_to(
        tmp_path / "elsewhere" / "T01-x_failure_ep000_seed7.mp4"
    )
    build_report([folder], tmp_path / "out")
    copied = [p.read_text() for p in (tmp_path / "out").rglob("*.mp4")]
    assert copied == []


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(policy="expert"), "'policy' is a str, not an object"),
        (lambda m: m["protocol"].update(memory_oracle={"a": 1}), "'protocol.memory_oracle' is a dict"),
        (lambda m: m["protocol"].update(replan_steps=1e400), "'protocol.replan_steps' is inf"),
        (lambda m: m["protocol"].update(replan_steps=True), "'protocol.replan_steps' is True"),
        (lambda m: m.update(protocol="memobench"), "'protocol' is a str, not an object"),
    ],
)
def test_a_hand_edited_run_json_with_wrong_types_is_a_one_line_error(tmp_path, edit, message):
    folder = write_run(tmp_path / "runs" / "a", [record("T01-x", 0, "SU", 2)])
    manifest = json.loads((folder / "run.json").read_text())
    edit(manifest)
    (folder / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(ReportError, match=re.escape(message)):
        build_report([folder], tmp_path / "out", videos=False)


@pytest.mark.timeout(60)
def test_a_fifo_named_like_a_video_is_skipped_not_read(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: the report must not open it."""
    folder = write_run(tmp_path / "runs" / "a", [record("T01-x", 0, "SU", 2)])
    videos = folder / "videos" / "T01-x"
    videos.mkdir(parents=True)
    os.mkfifo(videos / "T01-x_success_ep000_seed7.mp4")
    build_report([folder], tmp_path / "out")
    assert list((tmp_path / "out").rglob("*.mp4")) == []
