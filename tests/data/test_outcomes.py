"""Known attempt outcomes: read from a finished collection, refused when they are another
collection's, and skipped by a collection made again (which then writes the same file)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from tests.data.test_demos import synthetic_demo
from typer.testing import CliRunner

from memobench.cli import app
from memobench.data.demo_file import Demo, read_task_file, write_task_file
from memobench.data.outcomes import (
    OutcomesError,
    OutcomesFile,
    TaskOutcomes,
    demos_digest,
    known_failures,
    load_outcomes,
    outcomes_of_folder,
    unreproduced,
    write_outcomes,
)

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})
TASK = SimpleNamespace(id="T01-x", spec_hash="abc")


def kept_demo(attempt: int) -> Demo:
    demo = synthetic_demo()
    return Demo(demo.arrays, {**demo.attrs, "attempt": attempt})


def task_file(folder: Path, task_id: str, attempts: int, kept: list[int], noise: float = 0.15) -> Path:
    attrs = {"task_id": task_id, "spec_hash": "abc", "seed_base": 1_000_000, "attempts": attempts}
    attrs["action_noise"] = noise
    path = folder / f"{task_id}.hdf5"
    write_task_file(path, attrs, [kept_demo(a) for a in kept])
    return path


def test_a_finished_collection_tells_which_attempts_failed(tmp_path):
    task_file(tmp_path, "T01-x", 6, [1, 3, 5])
    task_file(tmp_path, "S01-y", 2, [0, 1])
    outcomes = outcomes_of_folder(tmp_path)
    assert outcomes.tasks["T01-x"] == TaskOutcomes(
        spec_hash="abc",
        seed_base=1_000_000,
        action_noise=0.15,
        attempts=6,
        failed=[0, 2, 4],
        demos_digest=demos_digest(tmp_path / "T01-x.hdf5"),
    )
    assert outcomes.tasks["S01-y"].failed == []
    write_outcomes(outcomes, tmp_path / "o.json")
    assert load_outcomes(tmp_path / "o.json") == outcomes


def test_a_collection_made_again_is_checked_against_the_recorded_demos_content(tmp_path):
    """The digest covers each demo's attempt and simulated arrays, not images (`data render` adds
    them later); a task recorded without a digest (an older file) is not checked."""
    recorded = outcomes_of_folder(task_file(tmp_path / "first", "T01-x", 4, [1, 3]).parent)
    digest = recorded.tasks["T01-x"].demos_digest
    assert digest is not None
    assert unreproduced(recorded, task_file(tmp_path / "same", "T01-x", 4, [1, 3]).parent, ["T01-x"]) == []
    rendered = Demo({**kept_demo(1).arrays, "obs/agentview_rgb": np.zeros((6, 8, 8, 3), np.uint8)}, kept_demo(1).attrs)
    write_task_file(tmp_path / "rendered" / "T01-x.hdf5", {"attempts": 4}, [rendered, kept_demo(3)])
    assert unreproduced(recorded, tmp_path / "rendered", ["T01-x"]) == []

    moved = kept_demo(3)
    moved.arrays["actions"][2, 0] += 1e-12
    write_task_file(tmp_path / "other" / "T01-x.hdf5", {"attempts": 4}, [kept_demo(1), moved])
    assert unreproduced(recorded, tmp_path / "other", ["T01-x"]) == [
        f"T01-x: demos digest {demos_digest(tmp_path / 'other' / 'T01-x.hdf5')}, the recorded collection's {digest}"
    ]
    write_task_file(tmp_path / "reordered" / "T01-x.hdf5", {"attempts": 4}, [kept_demo(3), kept_demo(1)])
    assert len(unreproduced(recorded, tmp_path / "reordered", ["T01-x"])) == 1
    older = OutcomesFile(tasks={"T01-x": recorded.tasks["T01-x"].model_copy(update={"demos_digest": None})})
    assert unreproduced(older, tmp_path / "other", ["T01-x"]) == []


def test_outcomes_apply_only_to_the_same_spec_seed_base_and_noise(tmp_path):
    outcomes = OutcomesFile(
        tasks={"T01-x": TaskOutcomes(spec_hash="abc", seed_base=5, action_noise=0.15, attempts=4, failed=[2])}
    )
    assert known_failures(outcomes, "o.json", TASK, 5, 0.15) == {2}
    assert known_failures(outcomes, "o.json", SimpleNamespace(id="S01-y", spec_hash="abc"), 5, 0.15) == frozenset()
    with pytest.raises(OutcomesError, match=r"o.json: tasks.T01-x.seed_base is 5, this collection's is 6"):
        known_failures(outcomes, "o.json", TASK, 6, 0.15)
    with pytest.raises(OutcomesError, match=r"tasks.T01-x.action_noise is 0.15, this collection's is 0.0"):
        known_failures(outcomes, "o.json", TASK, 5, 0.0)
    with pytest.raises(OutcomesError, match=r"tasks.T01-x.spec_hash is 'abc', this collection's is 'new'"):
        known_failures(outcomes, "o.json", SimpleNamespace(id="T01-x", spec_hash="new"), 5, 0.15)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", r"o.json: \(the file\): Invalid JSON"),
        (
            '{"tasks": {"T": {"spec_hash": "a", "seed_base": 0, "action_noise": 0, "attempts": 2, "failed": [2]}}}',
            r"o.json: tasks.T: Value error, failed attempts must lie in 0..1",
        ),
        (
            '{"tasks": {"T": {"spec_hash": "a", "seed_base": 0, "action_noise": 0, "attempts": 2, "failed": [1, 1]}}}',
            r"o.json: tasks.T: Value error, failed attempts repeat",
        ),
        ('{"tasks": {}, "eval": "x"}', r"o.json: eval: Extra inputs"),
        ('{"format": "other/1", "tasks": {}}', r"o.json: format: Input should be"),
    ],
)
def test_a_bad_outcomes_file_names_the_file_and_field(tmp_path, content, message):
    path = tmp_path / "o.json"
    path.write_text(content)
    with pytest.raises(OutcomesError, match=message):
        load_outcomes(path)


def test_collecting_with_known_failures_skips_them_and_writes_the_same_file(tmp_path, monkeypatch):
    """collect_task with the simulator replaced: attempts 0 and 2 fail, 1 and 3 succeed. Told
    0 and 2 fail, it runs only 1 and 3, and writes what the full run wrote."""
    import memobench.evaluation.envs as envs
    import memobench.policies.loader as loader
    from memobench.data import collect

    class NoEnvs:
        def __init__(self, capacity=3):
            pass

        def get(self, *args, **kwargs):
            return None, 0.0

        def close(self):
            pass

    class NoExpert:
        def close(self):
            pass

    ran: list[int] = []

    def record(task, attempt, seed_base, env, guard, protocol, perturbed):
        ran.append(attempt)
        return attempt % 2 == 1, kept_demo(attempt)

    monkeypatch.setattr(envs, "EnvCache", NoEnvs)
    monkeypatch.setattr(loader, "build_adapter", lambda spec: NoExpert())
    monkeypatch.setattr(collect, "record_demo", record)
    monkeypatch.setattr(collect, "plan_episode", lambda task, attempt, base: SimpleNamespace(variant=0, binding={}))
    monkeypatch.setattr(collect, "file_attrs", lambda task, base, attempts, demos, noise: {"attempts": attempts})

    full = collect.collect_task(TASK, 2, tmp_path / "full")
    assert (ran, full.kept, full.attempts) == ([0, 1, 2, 3], 2, 4)
    ran.clear()
    again = collect.collect_task(TASK, 2, tmp_path / "again", known_failures=frozenset({0, 2}))
    assert (ran, again.kept, again.attempts) == ([1, 3], 2, 4)
    (attrs, demos), (ref_attrs, ref_demos) = read_task_file(again.path), read_task_file(full.path)
    assert attrs == ref_attrs and [d.attrs for d in demos] == [d.attrs for d in ref_demos]


def test_the_commands_refuse_bad_input_with_the_file_named(tmp_path):
    bad = tmp_path / "o.json"
    bad.write_text(
        json.dumps(
            {
                "tasks": {
                    "T01-check-top-drawer": {
                        "spec_hash": "old",
                        "seed_base": 1_000_000,
                        "action_noise": 0.0,
                        "attempts": 3,
                        "failed": [1],
                    }
                }
            }
        )
    )
    result = runner.invoke(
        app, ["collect", "--tasks", "T01", "--known-outcomes", str(bad), "--out", str(tmp_path / "d")]
    )
    assert result.exit_code == 2
    assert "tasks.T01-check-top-drawer.spec_hash is 'old'" in result.output and str(bad) in result.output
    assert not (tmp_path / "d").exists()  # refused before any work
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["data", "outcomes", str(tmp_path / "empty"), "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "no finished task file" in result.output
    (tmp_path / "junk").mkdir()
    write_task_file(tmp_path / "junk" / "T.hdf5", {"task_id": "T"}, [])
    result = runner.invoke(app, ["data", "outcomes", str(tmp_path / "junk"), "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "T.hdf5: not a finished collection's task file" in result.output
    task_file(tmp_path / "junk", "T", 3, [2])
    result = runner.invoke(app, ["data", "outcomes", str(tmp_path / "junk"), "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 0, result.output
    assert "1 task(s), 3 attempts, 2 failed" in result.output
    assert load_outcomes(tmp_path / "x.json").tasks["T"].failed == [0, 1]


@pytest.mark.parametrize("same", [True, False])
def test_collect_with_known_outcomes_fails_keeping_the_files_when_the_demos_differ(tmp_path, monkeypatch, same):
    """`collect --known-outcomes` compares what it wrote with the recorded collection's digest."""
    import memobench.data.jobs as jobs
    from memobench.core.suite import Suite
    from memobench.data.collect import TaskCollection

    task = Suite.load().get("T01-check-top-drawer")
    recorded = task_file(tmp_path / "recorded", task.id, 4, [1, 3])
    digest = demos_digest(recorded)
    entry = TaskOutcomes(
        spec_hash=task.spec_hash, seed_base=1_000_000, action_noise=0.15, attempts=4, failed=[0, 2], demos_digest=digest
    )
    write_outcomes(OutcomesFile(tasks={task.id: entry}), tmp_path / "o.json")
    out = tmp_path / "out"

    def collect_dataset(tasks, episodes, folder, *args, **kwargs):  # the simulator's part, replaced
        demos = [kept_demo(1), kept_demo(3)]
        if not same:
            demos[1].arrays["states"][0, 0] += 1.0
        write_task_file(folder / f"{task.id}.hdf5", {"attempts": 4}, demos)
        return [TaskCollection(task.id, 2, 4, 12, folder / f"{task.id}.hdf5")]

    monkeypatch.setattr(jobs, "collect_dataset", collect_dataset)
    args = ["collect", "--tasks", task.id, "--episodes", "2", "--action-noise", "0.15"]
    result = runner.invoke(app, [*args, "--known-outcomes", str(tmp_path / "o.json"), "--out", str(out)])
    if same:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 2, result.output
        got = demos_digest(out / f"{task.id}.hdf5")
        assert f"{task.id}: demos digest {got}, the recorded collection's {digest}" in result.output
        assert (out / f"{task.id}.hdf5").exists()


def test_outcomes_of_a_collection_made_in_parts_update_the_file(tmp_path):
    """--update keeps the tasks the file lists that the folder has not; the folder's replace theirs.
    Without it the file is written whole, from the folder alone."""
    out = tmp_path / "o.json"
    task_file(tmp_path / "first", "T01-x", 4, [1, 3])
    task_file(tmp_path / "first", "S01-y", 2, [0, 1])
    assert runner.invoke(app, ["data", "outcomes", str(tmp_path / "first"), "--out", str(out)]).exit_code == 0
    task_file(tmp_path / "second", "S01-y", 3, [1, 2])
    task_file(tmp_path / "second", "O01-z", 1, [0])
    result = runner.invoke(app, ["data", "outcomes", str(tmp_path / "second"), "--out", str(out), "--update"])
    assert result.exit_code == 0 and "3 task(s), 8 attempts, 3 failed" in result.output, result.output
    tasks = load_outcomes(out).tasks
    assert list(tasks) == ["O01-z", "S01-y", "T01-x"]
    assert (tasks["T01-x"].failed, tasks["S01-y"].failed, tasks["O01-z"].failed) == ([0, 2], [0], [])
    assert runner.invoke(app, ["data", "outcomes", str(tmp_path / "second"), "--out", str(out)]).exit_code == 0
    assert list(load_outcomes(out).tasks) == ["O01-z", "S01-y"]
