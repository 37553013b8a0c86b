"""``memobench tasks``: list, show, stats, validate through the Typer app. No simulator."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.core.spec import TaskSpec
from memobench.core.suite import TASKS_ROOT, Suite
from memobench.core.suite_counts import COUNT_KEYS

PILOTS = [
    "T03-check-all-drawers",
    "T09-pour-twice-bowl",
    "S01-hide-and-retrieve-butter",
    "O01-cued-milk",
    "P04-stack-in-order",
]
# Wide enough that Rich neither wraps nor truncates what the tests look for.
runner = CliRunner(env={"COLUMNS": "250"})


def run(*args: str):
    return runner.invoke(app, ["tasks", *args])


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# ------------------------------------------------------------------- list


def test_list_table() -> None:
    result = run("list")
    assert result.exit_code == 0, result.output
    for task_id in PILOTS:
        assert task_id in result.stdout
    row = next(line for line in result.stdout.splitlines() if "T03-check-all-drawers" in line)
    assert "temporal" in row and "S U C" in row and "pilot, drawers" in row
    row = next(line for line in result.stdout.splitlines() if "P04-stack-in-order" in line)
    assert "S U" in row and " 6 " in row and "0.17" in row


def test_list_selector() -> None:
    result = run("list", "--tasks", "spatial,O01")
    assert result.exit_code == 0, result.output
    assert "S01-hide-and-retrieve-butter" in result.stdout
    assert "O01-cued-milk" in result.stdout
    assert "T03-check-all-drawers" not in result.stdout


def test_list_json() -> None:
    result = run("list", "--json", "--tasks", "pilot")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == PILOTS
    by_id = {r["id"]: r for r in rows}
    assert by_id["S01-hide-and-retrieve-butter"]["checkpoints"] == "S C U"
    assert by_id["P04-stack-in-order"]["variants"] == 6
    assert by_id["P04-stack-in-order"]["chance"] == pytest.approx(1 / 6)
    assert by_id["T09-pour-twice-bowl"]["tags"] == ["pilot", "pour", "counting"]
    assert by_id["O01-cued-milk"]["instruction"].startswith("put the milk carton")


def test_list_unknown_selector_exits_2_with_suggestion() -> None:
    result = run("list", "--tasks", "drawerz")
    assert result.exit_code == 2
    assert "did you mean 'drawers'" in result.stderr
    assert result.stdout == ""
    assert_no_traceback(result)


# ------------------------------------------------------------------- show


def test_show_everything() -> None:
    result = run("show", "S01-hide-and-retrieve-butter")
    assert result.exit_code == 0, result.output
    out = result.stdout
    task = Suite.load().get("S01")
    assert task.spec.instruction in out
    assert "spatial" in out and "pilot, drawers" in out and str(task.spec.horizon) in out
    for label in ("top", "middle", "bottom"):
        assert f"- {label} (region=wooden_cabinet_1_{label}_region, other_a=" in out
    assert "0.333" in out
    for cp in task.spec.checkpoints:
        assert f"{cp.id} [{cp.op.value}]" in out
        for level in ("coarse", "intermediate", "fine"):
            assert f"{level}: {cp.text.at(level)}" in out
        assert f"predicate: {cp.predicate}" in out
    assert f"post-goal window: {task.spec.monitor_steps} steps" in out
    for v in task.spec.violations:
        assert f"- {v.name} [" in out and f"what: {v.text}" in out


def test_show_counting_cue_and_list_predicates() -> None:
    t09 = run("show", "T09").stdout
    assert "exactly 2 pours of tomato_sauce_1 over akita_black_bowl_1" in t09
    assert "bindings: none" in t09
    p04 = run("show", "P04").stdout
    assert "cue: demo" in p04
    assert "- black-red-white (bottom=akita_black_bowl_1" in p04
    # Square brackets in predicates are printed as text, not read as Rich markup.
    t03 = run("show", "T03").stdout
    assert "all_closed([wooden_cabinet_1_top_region," in t03


def test_show_json_round_trips() -> None:
    result = run("show", "O01", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    task = Suite.load().get("O01-cued-milk")
    assert doc["spec_hash"] == task.spec_hash
    assert TaskSpec.model_validate(doc["spec"]) == task.spec


@pytest.mark.parametrize(
    ("given", "fragment"),
    [
        ("T03-check-all-drawer", "did you mean 'T03-check-all-drawers'"),
        ("X99-nothing", "unknown task 'X99-nothing'"),
    ],
)
def test_show_unknown_id_exits_2(given: str, fragment: str) -> None:
    result = run("show", given)
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert result.stderr.startswith("error: ")
    assert_no_traceback(result)


# ------------------------------------------------------------------ stats


def test_stats_json_pilots() -> None:
    result = run("stats", "--json", "--tasks", "pilot")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {*COUNT_KEYS, "families", "object_class_names", "fixture_class_names"}
    assert {k: doc[k] for k in COUNT_KEYS} == {
        "tasks": 5,
        "checkpoints": 12,
        "storage": 5,
        "update": 4,
        "compression": 3,
        "object_classes": 7,
        "fixture_classes": 2,
    }
    assert list(doc["families"]) == ["temporal", "spatial", "object", "procedural"]
    assert doc["families"]["temporal"] == {
        "tasks": 2,
        "checkpoints": 6,
        "storage": 2,
        "update": 2,
        "compression": 2,
        "object_classes": 3,
        "fixture_classes": 2,
    }
    assert doc["fixture_class_names"] == ["kitchen_table", "wooden_cabinet"]
    assert len(doc["object_class_names"]) == doc["object_classes"]


def test_stats_json_whole_suite_is_consistent() -> None:
    doc = json.loads(run("stats", "--json").stdout)
    assert doc["tasks"] == len(Suite.load())
    assert doc["checkpoints"] == doc["storage"] + doc["update"] + doc["compression"]
    for key in ("tasks", "checkpoints", "storage", "update", "compression"):
        assert sum(f[key] for f in doc["families"].values()) == doc[key]


def test_stats_table() -> None:
    result = run("stats", "--tasks", "pilot")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "family" in line)
    assert [c.strip() for c in header.split("┃")[1:-1]][1:8] == [k.replace("_", " ") for k in COUNT_KEYS]
    total = next(line for line in lines if "total" in line)
    cells = [c.strip() for c in total.split("│")[1:-1]]
    assert cells == ["total", "5", "12", "5", "4", "3", "7", "2", "2, 3, 6"]
    temporal = next(line for line in lines if "temporal" in line)
    assert [c.strip() for c in temporal.split("│")[1:-1]][-1] == "-"  # no bindings
    assert "fixture classes: kitchen_table, wooden_cabinet" in result.stdout


# --------------------------------------------------------------- validate


def copy_pilot(root: Path, family: str, task_id: str) -> Path:
    folder = root / family / task_id
    shutil.copytree(TASKS_ROOT / family / task_id, folder)
    return folder


def break_file(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_validate_packaged_suite() -> None:
    result = run("validate")
    assert result.exit_code == 0, result.output
    for task_id in PILOTS:
        assert f"ok    {task_id}" in result.stdout
    n = len(Suite.load(arena=True))  # both suites: MEMOBench's 30 and the arena's 26
    assert n == 56
    assert f"{n} task folders checked: {n} ok, 0 failed" in result.stdout


def test_validate_root_with_good_and_broken(tmp_path: Path) -> None:
    copy_pilot(tmp_path, "temporal", "T03-check-all-drawers")
    broken = copy_pilot(tmp_path, "object", "O01-cued-milk")
    break_file(broken / "task.yaml", "op: storage", "op: store")
    result = run("validate", str(tmp_path))
    assert result.exit_code == 1
    assert "ok    T03-check-all-drawers" in result.stdout
    assert f"FAIL  {broken}" in result.stdout
    assert str(broken / "task.yaml") in result.stdout
    assert "checkpoints.0.op" in result.stdout
    assert "2 task folders checked: 1 ok, 1 failed" in result.stdout
    assert_no_traceback(result)


def test_validate_reports_every_broken_task(tmp_path: Path) -> None:
    a = copy_pilot(tmp_path, "temporal", "T09-pour-twice-bowl")
    b = copy_pilot(tmp_path, "spatial", "S01-hide-and-retrieve-butter")
    c = copy_pilot(tmp_path, "object", "O01-cued-milk")
    d = copy_pilot(tmp_path, "procedural", "P04-stack-in-order")
    break_file(a / "task.yaml", "pour_count(", "pour_cnt(")
    break_file(b / "task.bddl", "{{drawer.region}}", "{{drawr.region}}")
    # Duplicate category lines: reported with the file even though load_task lets
    # BddlDeclarationError escape (see tests/core/test_suite.py).
    break_file(c / "task.bddl", "milk_1 milk_2 - milk", "milk_1 - milk\n    milk_2 - milk")
    (d / "task.yaml").write_bytes(b"id: P04\xff\n")
    result = run("validate", str(tmp_path))
    assert result.exit_code == 1
    assert "did you mean 'pour_count'" in result.stdout
    assert str(b / "task.bddl") in result.stdout and "drawr" in result.stdout
    assert str(c / "task.bddl") in result.stdout and "'milk' declared twice" in result.stdout
    assert str(d) in result.stdout and "not UTF-8" in result.stdout
    assert "4 task folders checked: 0 ok, 4 failed" in result.stdout
    assert_no_traceback(result)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("(:goal", "((:goal", "'(' is never closed"),
        ("- akita_black_bowl", "- akita_black_bowel", "unknown class 'akita_black_bowel'"),
        ("(On plate_1 kitchen_table", "(On plate_2 kitchen_table", "(on ...): 'plate_2' is not declared"),
        (
            "(Close wooden_cabinet_1_top_region)",
            "(Close wooden_cabinet_1_lid_region)",
            "'wooden_cabinet_1_lid_region' is not declared",
        ),
        ("(:yaw_rotation ((0.0 0.0)))", "(:yaw_rotation ((__import__ 0.0)))", "value '__import__' is not a number"),
    ],
)
def test_validate_catches_bddl_that_would_fail_every_episode(tmp_path: Path, old: str, new: str, message: str) -> None:
    """Unbalanced parentheses, an unknown object class, an undeclared object in :init / :goal:
    LIBERO fails on each when the env is built, which made every episode an env_error."""
    broken = copy_pilot(tmp_path, "temporal", "T03-check-all-drawers")
    break_file(broken / "task.bddl", old, new)
    result = run("validate", str(broken))
    assert result.exit_code == 1
    assert f"{broken / 'task.bddl'}" in result.stdout and ": line " in result.stdout
    assert message in result.stdout
    assert "1 task folder checked: 0 ok, 1 failed" in result.stdout
    assert_no_traceback(result)


def test_validate_task_folder_family_folder_and_missing_file(tmp_path: Path) -> None:
    good = copy_pilot(tmp_path, "temporal", "T03-check-all-drawers")
    lonely = copy_pilot(tmp_path, "temporal", "T09-pour-twice-bowl")
    (lonely / "task.yaml").unlink()  # Suite.load would skip this folder silently
    assert run("validate", str(good)).exit_code == 0
    assert run("validate", str(good / "task.yaml")).exit_code == 0
    result = run("validate", str(tmp_path / "temporal"))
    assert result.exit_code == 1
    assert "ok    T03-check-all-drawers" in result.stdout
    assert "missing task.yaml" in result.stdout


def test_validate_bad_paths(tmp_path: Path) -> None:
    good = copy_pilot(tmp_path, "temporal", "T03-check-all-drawers")
    (tmp_path / "empty").mkdir()
    result = run("validate", str(good), str(tmp_path / "nope"), str(tmp_path / "empty"))
    assert result.exit_code == 1
    assert f"{tmp_path / 'nope'}: no such file or directory" in result.stdout
    assert f"{tmp_path / 'empty'}: no task folders found" in result.stdout
    assert "3 task folders checked: 1 ok, 2 failed" in result.stdout


def test_validate_duplicate_ids(tmp_path: Path) -> None:
    copy_pilot(tmp_path / "a", "temporal", "T03-check-all-drawers")
    second = copy_pilot(tmp_path / "b", "temporal", "T03-check-all-drawers")
    result = run("validate", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a"))
    assert result.exit_code == 1
    assert f"duplicate task id 'T03-check-all-drawers', also declared in {tmp_path / 'a'}" in (result.stdout)
    assert f"FAIL  {second}" in result.stdout
    assert "2 task folders checked: 1 ok, 1 failed" in result.stdout  # a/ counted once


def test_broken_packaged_suite_is_reported_without_traceback(monkeypatch, tmp_path: Path) -> None:
    broken = copy_pilot(tmp_path, "object", "O01-cued-milk")
    break_file(broken / "task.yaml", "op: storage", "op: store")
    load = Suite.load
    monkeypatch.setattr(Suite, "load", lambda root=tmp_path, arena=False: load(root, arena=arena))
    result = run("list")
    assert result.exit_code == 1
    assert "the packaged task suite does not load" in result.stderr
    assert "memobench tasks validate" in result.stderr
    assert_no_traceback(result)


# ------------------------------------------------------------- light imports


def test_tasks_commands_import_no_simulator() -> None:
    code = """
import sys
from typer.testing import CliRunner
from memobench.cli import app
runner = CliRunner()
for args in (["list"], ["show", "S01"], ["show", "P04", "--json"], ["stats"], ["validate"]):
    result = runner.invoke(app, ["tasks", *args])
    assert result.exit_code == 0, (args, result.output)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"mujoco", "libero", "robosuite", "torch"})
print(",".join(heavy) or "none")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "none"


def test_list_arena_shows_its_26_and_all_stays_memobench() -> None:
    arena = json.loads(run("list", "--tasks", "arena", "--json").stdout)
    assert len(arena) == 26 and arena[0]["id"] == "A01-cookies-tomato-basket"
    assert {row["family"] for row in arena} == {"sequence", "occlusion", "counting", "transfer"}
    every = json.loads(run("list", "--json").stdout)
    assert len(every) == len(Suite.load()) == 30 and not any(row["id"].startswith("A") for row in every)
