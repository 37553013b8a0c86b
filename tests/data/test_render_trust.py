"""``memobench data render`` builds scenes from the suite's BDDL only: a crafted demo file is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.data.test_demos import synthetic_demo
from typer.testing import CliRunner

from memobench.cli import app
from memobench.core.suite import Suite
from memobench.data.demo_bddl import DemoFileError, replay_envs, suite_scenes
from memobench.data.demo_file import Demo, read_task_file, write_task_file

TASK = Suite.load().get("T03-check-all-drawers")  # one variant, no bindings
SUITE_BDDL = TASK.bddl({})


def demo_file(folder: Path, bddl: str | None = SUITE_BDDL, variant: object = 0, task_id: str = TASK.id) -> Path:
    demo = synthetic_demo()
    demo.attrs.update(variant=variant, layout_seed=1)
    if bddl is not None:
        demo.attrs["bddl"] = bddl
    path = folder / f"{TASK.id}.hdf5"
    write_task_file(path, {"task_id": task_id, "seed_base": 1_000_000}, [demo])
    return path


def test_the_suite_s_own_bddl_is_accepted(tmp_path):
    path = demo_file(tmp_path)
    attrs, demos = read_task_file(path, images=False)
    assert suite_scenes(path, attrs, demos) == [SUITE_BDDL]


@pytest.mark.parametrize("command", [["render", "--image-size", "16"], ["features"]])
def test_a_crafted_bddl_is_refused_and_the_file_kept(tmp_path, command):
    """Both commands that build a demo's scene (images, state features) build the suite's only."""
    marker = tmp_path / "pwned"
    payload = f"(:yaw_rotation ((__import__('os').system('touch\t{marker}') 0.0)))"
    crafted = SUITE_BDDL.replace("(:yaw_rotation ((0.0 0.0)))", payload, 1)
    path = demo_file(tmp_path, bddl=crafted)
    before = path.read_bytes()
    result = CliRunner().invoke(app, ["data", command[0], str(tmp_path), *command[1:]])
    assert result.exit_code == 2, result.output
    squeezed = "".join(result.output.split())  # rich wraps long paths anywhere
    assert f"{path}:data/demo_0attribute'bddl'differsfromline".replace(" ", "") in squeezed
    assert "thesuite'sBDDLofT03-check-all-drawersvariant0" in squeezed
    assert "Traceback" not in result.output
    assert path.read_bytes() == before and not list(tmp_path.glob("*.partial")) and not marker.exists()
    assert not list(tmp_path.glob("state-features/*"))  # no features, not even a partial file


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"variant": 3}, "data/demo_0 attribute 'variant' is 3; T03-check-all-drawers has variants 0..0"),
        ({"variant": "0"}, "attribute 'variant' is '0'"),
        ({"bddl": None}, "attribute 'bddl' is NoneType, not text"),
        ({"task_id": "T01-check-top-drawer"}, "data attribute 'task_id' is 'T01-check-top-drawer'"),
    ],
)
def test_a_demo_file_naming_another_scene_is_refused(tmp_path, change, message):
    path = demo_file(tmp_path, **change)
    attrs, demos = read_task_file(path, images=False)
    with pytest.raises(DemoFileError, match=message):
        suite_scenes(path, attrs, demos)


def test_a_file_that_is_not_a_demo_file_is_refused(tmp_path):
    from memobench.data.render import render_task_file

    path = tmp_path / f"{TASK.id}.hdf5"
    path.write_bytes(b"not hdf5")
    with pytest.raises(DemoFileError, match="not a readable demo file"):
        render_task_file(path, 16, ["agentview"])
    assert path.read_bytes() == b"not hdf5"


def test_features_of_a_folder_without_demo_files_is_refused_naming_it(tmp_path):
    result = CliRunner().invoke(app, ["data", "features", str(tmp_path)])
    assert result.exit_code == 2 and f"no <task>.hdf5 files in {tmp_path}" in "".join(result.output.split("\n"))


def test_replay_keeps_an_env_a_scene_for_the_last_three_scenes_and_closes_them_all(monkeypatch):
    """A task's demos cycle through its variants' scenes: each scene's env is built once while
    it stays among the last SCENE_ENVS used, and every env built is closed once."""
    built, closed = [], []

    class RecordingEnv:
        def __init__(self, bddl: str, **kwargs):
            self.bddl, self.kwargs = bddl, kwargs
            built.append(bddl)

        def reset(self, seed: int, arm_jitter: float = 0.0) -> None:
            self.seed, self.arm_jitter = seed, arm_jitter

        def close(self) -> None:
            closed.append(self.bddl)

    monkeypatch.setattr("memobench.sim.env.SimEnv", RecordingEnv)
    scenes = ["a", "b", "a", "c", "b", "d", "a"]
    demos = [Demo({}, {"layout_seed": 10 + i}) for i in range(len(scenes))]
    replayed = [(i, env.bddl, env.seed, env.kwargs) for i, _, env in replay_envs(demos, scenes, render=True)]
    assert replayed == [(i, scene, 10 + i, {"render": True}) for i, scene in enumerate(scenes)]
    assert built == ["a", "b", "c", "d", "a"]  # d evicts a (least recently used), a then evicts c
    assert closed[:2] == ["a", "c"] and sorted(closed) == sorted(built)
