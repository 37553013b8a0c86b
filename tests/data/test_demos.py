"""Demonstrations: the file layout round-trips, static checks catch bad demos, replay catches
actions that do not reproduce the recorded episode."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.data.demo_file import Demo, read_task_file, write_task_file
from memobench.data.validate import static_problems


def synthetic_demo(n: int = 6, key_frames=(2, 4)) -> Demo:
    rng = np.random.default_rng(0)
    arrays = {
        "actions": rng.uniform(-1, 1, (n, 7)),
        "states": rng.normal(size=(n, 30)),
        "robot_states": rng.normal(size=(n, 8)).astype(np.float32),
        "obs/ee_pos": rng.normal(size=(n, 3)),
        "obs/ee_ori": rng.normal(size=(n, 4)),
        "obs/gripper_states": rng.normal(size=(n, 2)),
        "obs/joint_states": rng.normal(size=(n, 7)),
        "obs/agentview_rgb": rng.integers(0, 255, (n, 8, 8, 3), dtype=np.uint8),
        "cue/states": np.zeros((0, 30)),
        "cue/robot_states": np.zeros((0, 8), np.float32),
    }
    checkpoints = [
        {
            "index": i,
            "id": f"c{i}",
            "op": "storage",
            "optional": False,
            "key_frame": f,
            "text": {"coarse": "a", "intermediate": "b", "fine": "c"},
        }
        for i, f in enumerate(key_frames)
    ]
    return Demo(
        arrays,
        {
            "num_samples": n,
            "seed": 1_000_000,
            "attempt": 0,
            "binding": {"x": "y"},
            "checkpoints": checkpoints,
            "policy_start": 0,
        },
    )


def test_task_file_round_trips_arrays_and_attributes(tmp_path):
    demos = [synthetic_demo(), synthetic_demo(4, (1, 3))]
    path = tmp_path / "T.hdf5"
    write_task_file(path, {"task_id": "T", "env_args": {"env_name": "x"}, "total": 10}, demos)
    attrs, back = read_task_file(path)
    assert attrs["task_id"] == "T" and attrs["env_args"] == {"env_name": "x"}
    assert [d.length for d in back] == [6, 4]
    for want, got in zip(demos, back, strict=True):
        assert set(got.arrays) == set(want.arrays)
        for key in want.arrays:
            np.testing.assert_array_equal(got.arrays[key], want.arrays[key])
            assert got.arrays[key].dtype == want.arrays[key].dtype
        assert got.attrs["checkpoints"] == want.attrs["checkpoints"]
        assert got.attrs["binding"] == {"x": "y"}
    _, no_images = read_task_file(path, images=False)
    assert "obs/agentview_rgb" not in no_images[0].arrays
    assert not list(tmp_path.glob("*.partial"))


def test_a_valid_demo_has_no_static_problems():
    assert static_problems(synthetic_demo()) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.arrays["actions"].__setitem__((0, 0), 1.5), "actions outside [-1, 1]"),
        (lambda d: d.arrays.__setitem__("robot_states", d.arrays["robot_states"].astype(np.float64)), "robot_states"),
        (lambda d: d.arrays.pop("obs/ee_pos"), "missing obs/ee_pos"),
        (lambda d: d.attrs["checkpoints"][0].__setitem__("key_frame", 5), "not increasing"),
        (lambda d: d.attrs["checkpoints"][1].__setitem__("key_frame", None), "no key frame"),
        (lambda d: d.attrs.__setitem__("num_samples", 7), "actions is float64[6, 7], expected float64[7, 7]"),
        (lambda d: d.arrays["states"].__setitem__((3, 1), np.nan), "states row 3 is not finite"),
        (lambda d: d.arrays["robot_states"].__setitem__((2, 0), np.inf), "robot_states row 2 is not finite"),
        (lambda d: d.arrays["obs/joint_states"].__setitem__((1, 4), -np.inf), "obs/joint_states row 1 is not finite"),
        (lambda d: d.attrs.__setitem__("arm_jitter", float("nan")), "'arm_jitter' is nan"),
    ],
)
def test_static_checks_name_the_problem(change, message):
    demo = synthetic_demo()
    change(demo)
    assert any(message in p for p in static_problems(demo)), static_problems(demo)


@pytest.mark.sim
def test_collected_demos_replay_exactly_and_a_changed_action_is_caught(tmp_path):
    from memobench.core.suite import Suite
    from memobench.data.collect import collect_task
    from memobench.data.validate import validate_dir

    task = Suite.load().get("O01-cued-milk")
    result = collect_task(task, 1, tmp_path)
    assert (result.kept, result.attempts) == (1, 1)
    attrs, (demo,) = read_task_file(result.path)
    assert attrs["seed_base"] == 1_000_000 and demo.attrs["seed"] == 1_000_000
    assert demo.attrs["policy_start"] == len(demo.arrays["cue/states"]) > 0  # O01 has a cue
    # the episode ends when the post-goal window after the checkpoint has passed
    assert demo.attrs["checkpoints"][0]["key_frame"] == demo.length - 1 - task.spec.monitor_steps
    (check,) = validate_dir(tmp_path, tasks=[task.id], episodes=1)
    assert check.problems == [] and check.state_drift == 0.0

    # Drop the carton early: the replay no longer reaches the recorded checkpoint.
    demo.arrays["actions"][demo.length // 2 :, 6] = -1.0
    write_task_file(result.path, attrs, [demo])
    (check,) = validate_dir(tmp_path)
    assert check.problems and check.state_drift > 0


def test_validate_command_reports_a_missing_folder_and_an_empty_one(tmp_path):
    from typer.testing import CliRunner

    from memobench.cli import app

    runner = CliRunner(env={"COLUMNS": "250"})
    missing = runner.invoke(app, ["data", "validate", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "is not a folder" in " ".join(missing.output.split())
    empty = runner.invoke(app, ["data", "validate", str(tmp_path), "--tasks", "O01"])
    assert empty.exit_code == 1 and "no file O01-cued-milk.hdf5" in empty.output


@pytest.mark.sim
@pytest.mark.render
@pytest.mark.skipif(__import__("ctypes.util").util.find_library("EGL") is None, reason="EGL not installed")
def test_replay_rendered_frames_equal_live_frames_bit_for_bit(tmp_path):
    from memobench.core.suite import Suite
    from memobench.data.collect import DEMO_SEED_BASE, collect_task
    from memobench.data.recorder import DemoRecorder
    from memobench.data.render import render_task_file
    from memobench.evaluation.episode import policy_images, run_episode
    from memobench.evaluation.protocol import Protocol, plan_episode
    from memobench.policies.adapter import AdapterGuard
    from memobench.policies.loader import build_adapter, builtin_spec
    from memobench.sim.env import SimEnv

    task = Suite.load().get("O01-cued-milk")
    result = collect_task(task, 1, tmp_path)  # camera-free
    assert result.kept == 1
    drawn = render_task_file(result.path, 64, ["agentview", "wrist"])
    attrs, demos = read_task_file(result.path)
    assert (attrs["image_size"], attrs["camera_size"], attrs["render_quality"]) == (64, 256, "reference")
    assert drawn == 2 * (demos[0].length + len(demos[0].arrays["cue/states"]))

    # The demo again, live, with both cameras rendering at every step.
    plan = plan_episode(task, 0, DEMO_SEED_BASE)
    live = DemoRecorder(live_cameras=("agentview", "wrist"), live_size=64)
    env = SimEnv(task.bddl(plan.binding), render=True)
    stored = demos[0].arrays
    try:
        guard = AdapterGuard(build_adapter(builtin_spec("expert")), timeout=None)
        as_collected = Protocol(adapter_timeout=0, commitments_to_horizon=False)  # ends after the post-goal window
        assert run_episode(task, plan, env, guard, as_collected, recorder=live).record.success
        # A stored frame is what the harness shows a policy at --resize-size 64 in that state.
        env.render_state(stored["states"][7], "agentview", 8)
        shown = policy_images(env, Protocol(resize_size=64))
        np.testing.assert_array_equal(shown[0], stored["obs/agentview_rgb"][7])
        np.testing.assert_array_equal(shown[1], stored["obs/eye_in_hand_rgb"][7])
    finally:
        env.close()
    np.testing.assert_array_equal(np.stack(live.states), stored["states"])  # rendering changed nothing
    np.testing.assert_array_equal(np.stack(live.live_frames["agentview"]), stored["obs/agentview_rgb"])
    np.testing.assert_array_equal(np.stack(live.live_frames["wrist"]), stored["obs/eye_in_hand_rgb"])
    assert stored["cue/agentview_rgb"].shape == (len(stored["cue/states"]), 64, 64, 3)


@pytest.mark.sim
def test_a_killed_or_extended_collection_resumes_to_the_same_file(tmp_path):
    from memobench.core.suite import Suite
    from memobench.data.collect import CollectionConflict, collect_task

    task = Suite.load().get("T01-check-top-drawer")
    resumed, straight = tmp_path / "resumed", tmp_path / "straight"
    first = collect_task(task, 1, resumed)

    class Killed(Exception):
        pass

    def kill_after_one_more(kept: int, attempts: int) -> None:
        if attempts == first.attempts + 1:
            raise Killed

    with pytest.raises(Killed):  # asked for 2; killed after the first new attempt
        collect_task(task, 2, resumed, on_attempt=kill_after_one_more)
    assert len(list((resumed / f"{task.id}.attempts").iterdir())) == 1
    assert read_task_file(first.path)[0]["successes"] == 1  # the finished file is untouched

    seen: list[tuple[int, int]] = []
    done = collect_task(task, 2, resumed, on_attempt=lambda k, a: seen.append((k, a)))
    assert seen[0][1] == first.attempts + 1 and seen[-1] == (2, done.attempts)  # journaled attempt replayed first
    assert not (resumed / f"{task.id}.attempts").exists()
    reference = collect_task(task, 2, straight)
    assert (done.kept, done.attempts, done.steps) == (reference.kept, reference.attempts, reference.steps)
    (attrs, demos), (ref_attrs, ref_demos) = read_task_file(done.path), read_task_file(reference.path)
    assert attrs == ref_attrs
    for demo, ref in zip(demos, ref_demos, strict=True):
        assert demo.attrs == ref.attrs and set(demo.arrays) == set(ref.arrays)
        for key in ref.arrays:
            np.testing.assert_array_equal(demo.arrays[key], ref.arrays[key])

    again: list[tuple[int, int]] = []
    collect_task(task, 2, resumed, on_attempt=lambda k, a: again.append((k, a)))
    assert again == [(2, done.attempts)]  # nothing left to run
    with pytest.raises(CollectionConflict, match="seed_base 1000000, not 5"):
        collect_task(task, 2, resumed, seed_base=5)


@pytest.mark.sim
@pytest.mark.render
@pytest.mark.skipif(__import__("ctypes.util").util.find_library("EGL") is None, reason="EGL not installed")
def test_collect_and_render_with_two_workers_write_every_task_and_its_card(tmp_path):
    from typer.testing import CliRunner

    from memobench.cli import app

    result = CliRunner(env={"COLUMNS": "250"}).invoke(
        app,
        [
            "collect",
            "--tasks",
            "T01,T09",
            "--episodes",
            "1",
            "--workers",
            "2",
            "--out",
            str(tmp_path),
            "--image-size",
            "32",
            "--cameras",
            "agentview",
        ],
    )
    assert result.exit_code == 0, result.output
    for task_id in ("T01-check-top-drawer", "T09-pour-twice-bowl"):
        attrs, (demo,) = read_task_file(tmp_path / f"{task_id}.hdf5")
        assert attrs["task_id"] == task_id and attrs["image_size"] == 32
        assert demo.arrays["obs/agentview_rgb"].shape == (demo.length, 32, 32, 3)
        assert not (tmp_path / f"{task_id}.attempts").exists()  # the journal is folded into the file
    assert "T09-pour-twice-bowl" in (tmp_path / "README.md").read_text()

    runner = CliRunner(env={"COLUMNS": "250"})
    valid = runner.invoke(app, ["data", "validate", str(tmp_path), "--tasks", "T01,T09", "--workers", "2"])
    assert valid.exit_code == 0, valid.output
    assert "2 demos in 2 task files checked" in valid.output and "T09-pour-twice-bowl demo 0: ok" in valid.output
    short = runner.invoke(app, ["data", "validate", str(tmp_path), "--episodes", "2", "--no-replay", "--workers", "2"])
    assert short.exit_code == 1
    assert short.output.count("1 demos, 2 requested") == 2  # a worker's file-level problems reach the report


def test_validate_refuses_what_render_features_and_train_refuse(tmp_path):
    """One checker: a demo whose scene is not the suite's (its stored BDDL altered, as a file that
    would put code in front of LIBERO's parser) is a problem for ``data validate`` too."""
    from memobench.core.suite import Suite
    from memobench.data.validate import validate_file

    task = Suite.load().get("T01")
    demo = synthetic_demo()
    demo.attrs |= {"variant": 0, "bddl": task.bddl({}).replace("(:objects", "(:objects\n    evil - ").strip()}
    path = tmp_path / f"{task.id}.hdf5"
    write_task_file(path, {"task_id": task.id, "spec_hash": task.spec_hash, "seed_base": 7}, [demo])
    checks = validate_file(path, replay=False)
    problems = [p for c in checks for p in c.problems]
    assert any("'bddl' differs from line" in p for p in problems), problems
