"""The task registry: loading the packaged pilots, selection, and task-file validation.

Validation cases copy one pilot folder into tmp_path, break one field, and
check that load_task raises TaskFileError naming the file, the field and what
would be valid. No simulator.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memobench.core.spec import MemoryType
from memobench.core.suite import TASKS_ROOT, Suite, Task, TaskFileError, UnknownTaskError, load_task

PILOTS = {
    "T03-check-all-drawers": "temporal",
    "T09-pour-twice-bowl": "temporal",
    "S01-hide-and-retrieve-butter": "spatial",
    "O01-cued-milk": "object",
    "P04-stack-in-order": "procedural",
}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return Suite.load()


# ---------------------------------------------------------------- packaged pilots


def test_pilots_load_with_their_families(suite: Suite) -> None:
    pilots = suite.select("pilot")
    assert {t.id: t.spec.family.value for t in pilots} == PILOTS
    assert set(PILOTS) <= set(suite.ids)


def test_suite_is_ordered_by_family_then_id(suite: Suite) -> None:
    order = list(MemoryType)
    keys = [(order.index(t.spec.family), t.id) for t in suite]
    assert keys == sorted(keys)
    assert len(suite) == len(suite.ids) == len(list(suite))


def test_every_task_folder_is_family_slash_id(suite: Suite) -> None:
    for task in suite:
        assert task.folder.name == task.id
        assert task.folder.parent.name == task.spec.family.value


def test_select_family_tag_and_list(suite: Suite) -> None:
    assert all(t.spec.family == MemoryType.SPATIAL for t in suite.select("spatial"))
    assert "S01-hide-and-retrieve-butter" in [t.id for t in suite.select("spatial")]
    drawers = [t.id for t in suite.select("drawers")]
    assert {"T03-check-all-drawers", "S01-hide-and-retrieve-butter"} <= set(drawers)
    mixed = [t.id for t in suite.select("O01-cued-milk, T03")]
    assert mixed == ["O01-cued-milk", "T03-check-all-drawers"]  # selector order kept
    # Overlapping items select a task once.
    assert [t.id for t in suite.select("T03,drawers")].count("T03-check-all-drawers") == 1


@pytest.mark.parametrize("selector", [None, "all", " all "])
def test_select_all(suite: Suite, selector: str | None) -> None:
    assert [t.id for t in suite.select(selector)] == suite.ids


@pytest.mark.parametrize("selector", ["", " ", ",", " , ,"])
def test_a_selection_naming_nothing_is_refused(suite: Suite, selector: str) -> None:
    # an empty --tasks (an unset shell variable) used to run all 30 tasks, and ',' none
    with pytest.raises(UnknownTaskError, match=r"names no task; give task ids, families or tags"):
        suite.select(selector)


def test_short_id(suite: Suite) -> None:
    assert suite.get("T03").id == "T03-check-all-drawers"
    assert suite.get("P04-stack-in-order").id == "P04-stack-in-order"


def test_unknown_id_suggests_closest(suite: Suite) -> None:
    with pytest.raises(UnknownTaskError) as err:
        suite.get("T03-check-all-drawer")
    message = str(err.value)
    assert "'T03-check-all-drawer'" in message
    assert "did you mean 'T03-check-all-drawers'" in message


def test_unknown_selector_suggests_tag(suite: Suite) -> None:
    with pytest.raises(UnknownTaskError, match=r"did you mean 'drawers'"):
        suite.select("drawerz")
    with pytest.raises(UnknownTaskError, match=r"'spatail'.*did you mean 'spatial'"):
        suite.select("pilot,spatail")


def test_spec_hash_is_stable_and_content_sensitive(suite: Suite) -> None:
    task = suite.get("S01")
    again = load_task(task.folder)
    assert again.spec_hash == task.spec_hash
    changed = Task(task.spec, task.bddl_template + " ", task.folder)
    assert changed.spec_hash != task.spec_hash
    retimed = Task(task.spec.model_copy(update={"horizon": task.spec.horizon + 1}), task.bddl_template, task.folder)
    assert retimed.spec_hash != task.spec_hash


def test_every_task_meets_the_validity_rules(suite: Suite) -> None:
    """docs/protocol.md: horizons of at least 1,200 steps, a post-goal commitment on every
    task (undoing or redoing it after the goal fails), and every op label explained."""
    assert len(suite) == 30
    for task in suite:
        spec = task.spec
        assert spec.horizon >= 1200, task.id
        assert any(spec.post_goal(v) for v in spec.violations), f"{task.id}: no post-goal commitment"
        assert all(cp.why.strip() for cp in spec.checkpoints), f"{task.id}: an op label without its reason"


def test_spec_hash_ignores_the_op_reasons(suite: Suite) -> None:
    task = suite.get("T01")
    cps = [cp.model_copy(update={"why": "reworded"}) for cp in task.spec.checkpoints]
    reworded = Task(task.spec.model_copy(update={"checkpoints": cps}), task.bddl_template, task.folder)
    assert reworded.spec_hash == task.spec_hash


def test_spec_hash_ignores_the_chance_level(suite: Suite) -> None:
    """A corrected chance level judges episodes anew but changes none: demos stay valid."""
    task = suite.get("S06")
    rejudged = Task(task.spec.model_copy(update={"chance_level": 0.5}), task.bddl_template, task.folder)
    assert rejudged.spec.chance_level != task.spec.chance_level
    assert rejudged.spec_hash == task.spec_hash


def test_task_renders_bddl_per_binding(suite: Suite) -> None:
    task = suite.get("S01")
    text = task.bddl({"drawer": {"name": "top", "region": "wooden_cabinet_1_top_region"}})
    assert "(Open wooden_cabinet_1_top_region)" in text
    assert "{{" not in text


# ------------------------------------------------------------- task-file errors


def copy_pilot(tmp_path: Path, task_id: str, folder_name: str | None = None) -> Path:
    """Copy a pilot folder to tmp_path/<family>/<folder_name or id>/; return the folder."""
    family = PILOTS[task_id]
    folder = tmp_path / family / (folder_name or task_id)
    shutil.copytree(TASKS_ROOT / family / task_id, folder)
    return folder


def edit(path: Path, old: str, new: str) -> None:
    """Replace ``old`` (which must occur) by ``new`` in a file."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}: the pilot changed, update this test"
    path.write_text(text.replace(old, new, 1))


# (case id, pilot, file, old, new, the file named in the error, fragments of the message)
BROKEN = [
    (
        "bad-op",
        "T03-check-all-drawers",
        "task.yaml",
        "op: storage",
        "op: store",
        "task.yaml",
        ["checkpoints.0.op", "'storage'", "'update'", "'compression'", "'store'"],
    ),
    (
        "missing-fine-text",
        "S01-hide-and-retrieve-butter",
        "task.yaml",
        "      fine: the butter was picked up from the table and dropped inside the drawer that was open\n",
        "",
        "task.yaml",
        ["checkpoints.0.text.fine", "Field required"],
    ),
    (
        "bad-family",
        "T09-pour-twice-bowl",
        "task.yaml",
        "family: temporal",
        "family: tempural",
        "task.yaml",
        ["field 'family'", "'temporal'", "'spatial'", "'object'", "'procedural'"],
    ),
    (
        "id-prefix-wrong-for-family",
        "T09-pour-twice-bowl",
        "task.yaml",
        "id: T09-pour-twice-bowl",
        "id: S09-pour-twice-bowl",
        "task.yaml",
        ["S09-pour-twice-bowl", "temporal", "must start with 'T'"],
    ),
    (
        "unknown-predicate-function",
        "T03-check-all-drawers",
        "task.yaml",
        "predicate: closed_after_open(wooden_cabinet_1_top_region)",
        "predicate: closed_after_opne(wooden_cabinet_1_top_region)",
        "task.yaml",
        ["checkpoints.0.predicate", "closed_after_opne", "did you mean 'closed_after_open'"],
    ),
    (
        "undeclared-object",
        "S01-hide-and-retrieve-butter",
        "task.yaml",
        "predicate: on(butter_1, plate_1)",
        "predicate: on(butter_1, plate_2)",
        "task.yaml",
        ["checkpoints.2.predicate", "plate_2 not declared in task.bddl", "plate_1"],
    ),
    (
        "unbound-ref",
        "O01-cued-milk",
        "task.yaml",
        "predicate: on($cued.target, plate_1)",
        "predicate: on($cue.target, plate_1)",
        "task.yaml",
        ["checkpoints.0.predicate", "unbound reference $cue.target", "$cued"],
    ),
    (
        "missing-binding-key",
        "S01-hide-and-retrieve-butter",
        "task.yaml",
        "predicate: in(butter_1, $drawer.region)",
        "predicate: in(butter_1, $drawer.regoin)",
        "task.yaml",
        ["checkpoints.0.predicate", "no key 'regoin'", "region"],
    ),
    (
        "bddl-placeholder-unknown-binding",
        "S01-hide-and-retrieve-butter",
        "task.bddl",
        "(Open {{drawer.region}})",
        "(Open {{drawr.region}})",
        "task.bddl",
        ["{{drawr}}", "not a binding", "drawer"],
    ),
    (
        "bddl-placeholder-unknown-key",
        "P04-stack-in-order",
        "task.bddl",
        "(On {{order.top}} {{order.middle}})",
        "(On {{order.top}} {{order.centre}})",
        "task.bddl",
        ["'order'", "no key 'centre'", "bottom, middle, name, top"],
    ),
    (
        "invalid-yaml",
        "O01-cued-milk",
        "task.yaml",
        "monitor_steps: 30",
        "monitor_steps: [30",
        "task.yaml",
        ["not valid YAML"],
    ),
    (
        "top-level-not-mapping",
        "O01-cued-milk",
        "task.yaml",
        "id: O01-cued-milk",
        "- id: O01-cued-milk",
        "task.yaml",
        [],  # either YAML or "mapping" error; only the path is required
    ),
    (
        "unknown-field",
        "T09-pour-twice-bowl",
        "task.yaml",
        "monitor_steps: 100",
        "monitor_steps: 100\nhorizn: 900",
        "task.yaml",
        ["horizn", "Extra inputs are not permitted"],
    ),
    (
        "object-task-without-cue",
        "O01-cued-milk",
        "task.yaml",
        "cue:\n  kind: point\n  targets: [$cued.target]\n",
        "",
        "task.yaml",
        ["object tasks need a cue"],
    ),
    (
        "violation-after-unknown-checkpoint",
        "T03-check-all-drawers",
        "task.yaml",
        "after: all-checked",
        "after: all-check",
        "task.yaml",
        ["violation 'bottom-reopened'", "after 'all-check' is not a checkpoint id", "top-checked"],
    ),
    (
        "violation-until-before-after",
        "T03-check-all-drawers",
        "task.yaml",
        "    until: middle-checked\n",
        "    until: top-checked\n",
        "task.yaml",
        ["violation 'bottom-before-middle'", "until 'top-checked' must come after"],
    ),
    (
        "violation-unknown-predicate",
        "T03-check-all-drawers",
        "task.yaml",
        "predicate: not closed(wooden_cabinet_1_top_region)",
        "predicate: not closd(wooden_cabinet_1_top_region)",
        "task.yaml",
        ["field 'violations.2.predicate'", "did you mean 'closed'"],
    ),
    (
        "violation-undeclared-name",
        "T03-check-all-drawers",
        "task.yaml",
        "predicate: not closed(wooden_cabinet_1_top_region)",
        "predicate: not closed(wooden_cabinet_9_top_region)",
        "task.yaml",
        ["field 'violations.2.predicate'", "wooden_cabinet_9_top_region not declared"],
    ),
    (
        "horizon-below-the-papers",
        "T03-check-all-drawers",
        "task.yaml",
        "monitor_steps: 120",
        "monitor_steps: 120\nhorizon: 600",
        "task.yaml",
        ["field 'horizon'", "greater than or equal to 1200"],
    ),
]


@pytest.mark.parametrize(
    ("pilot", "filename", "old", "new", "named_file", "fragments"),
    [pytest.param(*case[1:], id=case[0]) for case in BROKEN],
)
def test_broken_task_file(
    tmp_path: Path,
    pilot: str,
    filename: str,
    old: str,
    new: str,
    named_file: str,
    fragments: list[str],
) -> None:
    folder = copy_pilot(tmp_path, pilot)
    load_task(folder)  # the unbroken copy is valid, so the edit is what breaks it
    edit(folder / filename, old, new)
    with pytest.raises(TaskFileError) as err:
        load_task(folder)
    message = str(err.value)
    assert str(folder / named_file) in message
    for fragment in fragments:
        assert fragment in message


def test_folder_name_must_equal_id(tmp_path: Path) -> None:
    folder = copy_pilot(tmp_path, "T03-check-all-drawers", folder_name="T03-check-drawers")
    with pytest.raises(TaskFileError) as err:
        load_task(folder)
    message = str(err.value)
    assert str(folder / "task.yaml") in message
    assert "field 'id'" in message and "'T03-check-drawers'" in message


def test_family_must_match_parent_folder(tmp_path: Path) -> None:
    folder = tmp_path / "spatial" / "T03-check-all-drawers"
    shutil.copytree(TASKS_ROOT / "temporal" / "T03-check-all-drawers", folder)
    with pytest.raises(TaskFileError) as err:
        load_task(folder)
    assert str(folder / "task.yaml") in str(err.value)
    assert "field 'family'" in str(err.value) and "'spatial'/" in str(err.value)


@pytest.mark.parametrize("missing", ["task.yaml", "task.bddl"])
def test_missing_file(tmp_path: Path, missing: str) -> None:
    folder = copy_pilot(tmp_path, "O01-cued-milk")
    (folder / missing).unlink()
    with pytest.raises(TaskFileError, match=f"missing {missing}") as err:
        load_task(folder)
    assert str(folder) in str(err.value)


def test_duplicate_category_lines_in_bddl(tmp_path: Path) -> None:
    folder = copy_pilot(tmp_path, "O01-cued-milk")
    edit(folder / "task.bddl", "milk_1 milk_2 - milk", "milk_1 - milk\n    milk_2 - milk")
    with pytest.raises(TaskFileError) as err:
        load_task(folder)
    assert str(folder / "task.bddl") in str(err.value)
    assert "'milk' declared twice" in str(err.value)


def test_suite_load_reads_every_family_folder(tmp_path: Path) -> None:
    copy_pilot(tmp_path, "T03-check-all-drawers")
    copy_pilot(tmp_path, "O01-cued-milk")
    assert Suite.load(tmp_path).ids == ["T03-check-all-drawers", "O01-cued-milk"]


def test_suite_load_stops_at_a_broken_task(tmp_path: Path) -> None:
    copy_pilot(tmp_path, "T03-check-all-drawers")
    broken = copy_pilot(tmp_path, "O01-cued-milk")
    edit(broken / "task.yaml", "op: storage", "op: keep")
    with pytest.raises(TaskFileError, match="checkpoints.0.op"):
        Suite.load(tmp_path)
