"""The task catalogue: markdown from the task files, stills from the simulator."""

from __future__ import annotations

import ctypes.util

import numpy as np
import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.core.suite import Suite
from memobench.report.catalogue import catalogue_markdown, render_stills, still_names, task_section


@pytest.fixture(scope="module")
def suite() -> Suite:
    return Suite.load()


def test_every_task_gets_a_section_with_its_checkpoints_texts_and_ops(suite):
    tasks = suite.select("pilot")
    text = catalogue_markdown(tasks, image_dir=None)
    for task in tasks:
        assert f"## {task.id}" in text
        assert f"> {task.spec.instruction}" in text
        for cp in task.spec.checkpoints:
            row = next(line for line in text.splitlines() if f"`{cp.id}`" in line)
            assert cp.op.value in row and cp.text.coarse in row and cp.text.fine in row
    assert "![" not in text  # no image links without stills
    assert text.startswith("# MEMOBench task catalogue")


def test_the_arena_alone_gets_its_own_title():
    arena = Suite.load(arena=True)
    assert catalogue_markdown(arena.select("arena"), None).startswith("# Arena task catalogue")
    mixed = arena.select("A01-cookies-tomato-basket") + arena.select("T01-check-top-drawer")
    assert catalogue_markdown(mixed, None).startswith("# MEMOBench task catalogue")


def test_sections_link_the_stills_and_list_bindings_and_chance(suite):
    o01 = suite.get("O01-cued-milk")
    section = "\n".join(task_section(o01, "tasks"))
    assert "chance level 0.500" in section and "2 binding variant(s)" in section
    assert "| `cued` | left |" in section and "| `cued` | right |" in section
    for name in still_names(o01).values():
        assert f"(tasks/{name})" in section
    t03 = "\n".join(task_section(suite.get("T03-check-all-drawers"), "tasks"))
    assert "No binding" in t03 and "_cue.png" not in t03  # no cue, no cue still


def test_catalogue_command_writes_markdown_without_images(tmp_path):
    out = tmp_path / "docs" / "tasks.md"
    result = CliRunner().invoke(app, ["tasks", "catalogue", "--out", str(out), "--tasks", "T03", "--no-images"])
    assert result.exit_code == 0, result.output
    assert "## T03-check-all-drawers" in out.read_text()


@pytest.mark.sim
@pytest.mark.render
@pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed")
def test_stills_show_the_scene_and_the_cue(suite, tmp_path):
    import imageio.v3 as iio

    paths = render_stills(suite.get("O01-cued-milk"), tmp_path, size=64)
    assert set(paths) == {"initial", "cue"}
    initial, cue = iio.imread(paths["initial"]), iio.imread(paths["cue"])
    assert initial.shape == cue.shape == (64, 64, 3)
    assert not np.array_equal(initial, cue)  # the cue frame shows the arm over a carton
