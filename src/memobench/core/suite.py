"""The task registry: load and validate task folders, select tasks by id, family or tag.

A task folder is ``tasks/<family>/<task_id>/`` with ``task.yaml`` (a
:class:`~memobench.core.spec.TaskSpec`) and ``task.bddl`` (a template). Loading
validates everything that can be checked without a simulator; every error
names the file, the field and what would be valid.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from memobench.core import expr, predicates, registers
from memobench.core.bddl_check import BddlError, check_problem
from memobench.core.bddl_names import BddlDeclarationError, declared_names
from memobench.core.bindings import BindingError, all_bindings, render_template, resolve_reference
from memobench.core.spec import ARENA_SUITE, MEMOBENCH_SUITE, PLACEHOLDER, ArenaFamily, MemoryType, TaskSpec

TASKS_ROOT = Path(__file__).parent.parent / "tasks"
ARENA_FOLDER = "arena"  # under a tasks root: the second suite, ``arena/<family>/<task_id>/``

# Spec fields outside the spec hash (and each checkpoint's ``why``). ``chance_level`` is
# certification metadata: the memoryless rate a task is judged against. Re-deriving it (it happened three times) must
# not invalidate 50 collected demos and every run folder of the task.
NOT_HASHED = frozenset({"chance_level"})
# Counting fields added with the arena suite, hashed only when a task sets them: the
# MEMOBench tasks, written before they existed, keep their spec hashes (demos, run
# folders and Gymnasium ids are stamped with them).
HASHED_WHEN_SET = {"baseline_samples": 1, "near_during": False}


def arena_number(task_id: str) -> int | None:
    """RoboMemArena's number of an arena task id (``A06-...`` -> 6); None for a MEMOBench id."""
    if len(task_id) >= 3 and task_id[0] == "A" and task_id[1:3].isdigit():
        return int(task_id[1:3])
    return None


class TaskFileError(ValueError):
    """A task file is malformed; the message names the file and the field."""


class UnknownTaskError(KeyError):
    """A task id, family or tag that does not exist; the message suggests the closest."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


@dataclass(frozen=True)
class Task:
    """A loaded, validated task: its spec, its BDDL template and where they came from."""

    spec: TaskSpec
    bddl_template: str
    folder: Path

    @property
    def id(self) -> str:
        return self.spec.id

    def bddl(self, binding: dict[str, Any]) -> str:
        """The BDDL problem for one binding."""
        return render_template(self.bddl_template, binding)

    @cached_property
    def spec_hash(self) -> str:
        """Content hash of spec + template: changes whenever an episode of the task can change.

        Fields in :data:`NOT_HASHED` are left out: they judge episodes but never change one,
        so correcting them keeps the demos and run folders stamped with the hash valid."""
        fields = {k: v for k, v in self.spec.to_jsonable().items() if k not in NOT_HASHED}
        for cp in fields["checkpoints"]:
            cp.pop("why", None)  # the op label's explanation: documentation, never an episode
        if fields["counting"] is not None:
            for key, default in HASHED_WHEN_SET.items():
                if fields["counting"][key] == default:
                    del fields["counting"][key]
        if not fields["moves_early"]:
            del fields["moves_early"]  # added after most tasks were written: their hashes stay
        for gate in fields["home"]:
            if gate["where"] is None:
                del gate["where"]  # likewise
        # The register rules (docs/protocol.md) judge every episode beside the task's own.
        payload = json.dumps(fields, sort_keys=True) + self.bddl_template + json.dumps(registers.fingerprint())
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _format_validation_error(path: Path, err: ValidationError) -> str:
    lines = [f"{path}: invalid task file"]
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(top level)"
        got = e.get("input")
        got_text = "" if isinstance(got, dict | list) else f" (got {got!r})"
        lines.append(f"  field '{field}': {e['msg']}{got_text}")
    return "\n".join(lines)


def _parse_predicates(path: Path, spec: TaskSpec) -> list[tuple[str, expr.Expr]]:
    """Parse and type-check every predicate template; returns (field, tree) pairs."""
    trees = []
    fields = [(f"checkpoints.{i}.predicate", cp.predicate) for i, cp in enumerate(spec.checkpoints)]
    fields += [(f"violations.{i}.predicate", v.predicate) for i, v in enumerate(spec.violations)]
    for i, gate in enumerate(spec.home):
        fields += [(f"home.{i}.{key}", text) for key, text in (("keep", gate.keep), ("where", gate.where)) if text]
    for field, text in fields:
        try:
            tree = expr.parse(text)
            predicates.check(tree)
        except expr.ExprError as e:
            raise TaskFileError(f"{path}: field '{field}': {e}") from None
        trees.append((field, tree))
    return trees


def _names_used(
    path: Path, spec: TaskSpec, trees: list[tuple[str, expr.Expr]], binding: dict[str, Any]
) -> dict[str, set[str]]:
    """Field -> object/fixture/region names it refers to under ``binding``."""
    used = {}
    for field, tree in trees:
        try:
            concrete = expr.substitute(tree, binding)
        except expr.ExprError as e:
            raise TaskFileError(f"{path}: field '{field}': {e}") from None
        used[field] = {node.name for node in expr.walk(concrete) if isinstance(node, expr.Name)}
    for i, target in enumerate(spec.cue.targets if spec.cue else []):
        try:
            used[f"cue.targets.{i}"] = {str(resolve_reference(target, binding))}
        except BindingError as e:
            raise TaskFileError(f"{path}: field 'cue.targets.{i}': {e}") from None
    if spec.counting is not None:
        used["counting.object"] = {spec.counting.object}
        used["counting.target"] = {spec.counting.target}
    return used


def _check_moves_early(path: Path, spec: TaskSpec, trees: list[tuple[str, expr.Expr]], binding: dict[str, Any]) -> None:
    """Every ``moves_early`` object is what some checkpoint is about (else the entry does nothing)."""
    about: set[str] = set()
    for field, tree in trees:
        if field.startswith("checkpoints."):
            about |= registers.subjects(expr.substitute(tree, binding))
    for i, name in enumerate(spec.moves_early):
        if name not in about:
            raise TaskFileError(
                f"{path}: field 'moves_early.{i}': no checkpoint is about {name!r} "
                f"(checkpoints are about: {', '.join(sorted(about))})"
            )


def _check_names(path: Path, spec: TaskSpec, bddl_template: str) -> None:
    """Every name a predicate, the cue or the counting monitor uses exists, for every binding."""
    trees = _parse_predicates(path, spec)
    bddl_path = path.with_name("task.bddl")
    for binding in all_bindings(spec):
        try:
            text = render_template(bddl_template, binding)
            check_problem(text)  # LIBERO's classes are checked by `tasks validate` and at env build
            names = declared_names(text)
        except (BindingError, BddlDeclarationError, BddlError) as e:
            raise TaskFileError(f"{bddl_path}: {e}") from None
        used = _names_used(path, spec, trees, binding)
        _check_moves_early(path, spec, trees, binding)
        for field, field_names in used.items():
            unknown = sorted(field_names - names)
            if unknown:
                raise TaskFileError(
                    f"{path}: field '{field}': {', '.join(unknown)} not declared in task.bddl "
                    f"(declared: {', '.join(sorted(names))})"
                )


# libyaml's safe loader where PyYAML was built with it: the same task specs, the 56 task files
# loaded in 0.20 s instead of 0.48 s (measured beside a 2-worker run); every command loads them
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_task(folder: Path) -> Task:
    """Load and validate one task folder; raises :class:`TaskFileError`."""
    yaml_path, bddl_path = folder / "task.yaml", folder / "task.bddl"
    for p in (yaml_path, bddl_path):
        if not p.is_file():
            raise TaskFileError(f"{folder}: missing {p.name} (a task folder holds task.yaml and task.bddl)")
    try:
        raw = yaml.load(yaml_path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
        template = bddl_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TaskFileError(f"{folder}: a task file is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        raise TaskFileError(f"{yaml_path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise TaskFileError(f"{yaml_path}: expected a mapping of fields at the top level")
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as e:
        raise TaskFileError(_format_validation_error(yaml_path, e)) from None
    if folder.name != spec.id:
        raise TaskFileError(f"{yaml_path}: field 'id': {spec.id!r} must equal the folder name {folder.name!r}")
    if spec.suite == ARENA_SUITE and folder.parent.parent.name != ARENA_FOLDER:
        raise TaskFileError(f"{yaml_path}: an arena task (family {spec.family.value!r}) belongs under {ARENA_FOLDER}/")
    if folder.parent.name != spec.family.value:
        raise TaskFileError(
            f"{yaml_path}: field 'family': {spec.family.value!r} but the task sits under {folder.parent.name!r}/"
        )
    for name, _key in PLACEHOLDER.findall(template):
        if name not in spec.bindings:
            raise TaskFileError(
                f"{bddl_path}: placeholder {{{{{name}}}}} is not a binding of the task "
                f"(bindings: {', '.join(sorted(spec.bindings)) or 'none'})"
            )
    _check_names(yaml_path, spec, template)
    return Task(spec=spec, bddl_template=template, folder=folder)


class Suite:
    """An ordered collection of tasks, addressable by id, family or tag.

    It may hold both suites: MEMOBench's and the arena (RoboMemArena's tasks). ``all``
    (and no selection) means the MEMOBench tasks only; arena tasks are selected by name:
    ``arena`` (the suite tag), an arena family, an ``arena-<family>`` tag or their ids.
    MEMOBench's names win where they meet: ``counting`` is the tag of T09/T10; the
    arena's counting family is ``arena-counting``.
    """

    def __init__(self, tasks: Iterable[Task]):
        family_order = list(MemoryType)

        def order(task: Task) -> tuple:
            # MEMOBench by family (T, S, O, P as in the paper), then the arena in its own numbering.
            if task.spec.suite == ARENA_SUITE:
                return (len(family_order), task.id)
            return (family_order.index(task.spec.family), task.id)

        ordered = sorted(tasks, key=order)
        self._tasks: dict[str, Task] = {}
        for task in ordered:
            if task.id in self._tasks:
                raise TaskFileError(
                    f"task id {task.id!r} is used twice: {self._tasks[task.id].folder} and {task.folder}"
                )
            self._tasks[task.id] = task

    @classmethod
    def load(cls, root: Path = TASKS_ROOT, *, arena: bool = False) -> Suite:
        """Load every ``<family>/<task_id>/`` folder under ``root`` (MEMOBench's tasks), and
        with ``arena`` every ``arena/<family>/<task_id>/`` folder too (the second suite)."""
        patterns = ["*/*/task.*"] + ([f"{ARENA_FOLDER}/*/*/task.*"] if arena else [])
        # A folder with either file counts, so one missing the other is reported, not skipped.
        folders = sorted(
            {p.parent for pattern in patterns for p in root.glob(pattern) if p.name in ("task.yaml", "task.bddl")}
        )
        return cls(load_task(f) for f in folders)

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self):
        return iter(self._tasks.values())

    @property
    def ids(self) -> list[str]:
        return list(self._tasks)

    @property
    def tags(self) -> set[str]:
        return {tag for t in self for tag in t.spec.tags}

    def get(self, task_id: str) -> Task:
        """The task with this id; :class:`UnknownTaskError` suggests the closest id."""
        if task_id in self._tasks:
            return self._tasks[task_id]
        # Accept the short form ("T03") when it is unambiguous.
        short = [t for t in self._tasks if t.split("-", 1)[0] == task_id]
        if len(short) == 1:
            return self._tasks[short[0]]
        raise UnknownTaskError(_unknown_message("task", task_id, self.ids))

    def select(self, selector: str | None) -> list[Task]:
        """Tasks named by a comma-separated list of ids, families, tags, or ``all`` (None: all).

        A selector that names nothing (``""``, ``","``) raises :class:`UnknownTaskError`:
        it is a mistake (an unset shell variable), not a request for every task or none.
        """
        if selector is None or selector.strip() == "all":
            return [t for t in self if t.spec.suite == MEMOBENCH_SUITE]
        items = [s.strip() for s in selector.split(",") if s.strip()]
        if not items:
            raise UnknownTaskError(
                f"the task selection {selector!r} names no task; give task ids, families or "
                "tags, comma-separated, or 'all'"
            )
        chosen: dict[str, Task] = {}
        for item in items:
            for task in self._resolve(item):
                chosen.setdefault(task.id, task)
        return list(chosen.values())

    def _resolve(self, item: str) -> list[Task]:
        if item in {m.value for m in MemoryType}:
            return [t for t in self if t.spec.family == item]
        memobench = [t for t in self if t.spec.suite == MEMOBENCH_SUITE]
        if any(item in t.spec.tags for t in memobench):
            return [t for t in memobench if item in t.spec.tags]
        if item in {f.value for f in ArenaFamily} and (hits := [t for t in self if t.spec.family == item]):
            return hits
        if item in self.tags:
            return [t for t in self if item in t.spec.tags]
        try:
            return [self.get(item)]
        except UnknownTaskError:
            families = [m.value for m in MemoryType] + [f.value for f in ArenaFamily]
            pool = self.ids + sorted(self.tags) + families + ["all"]
            raise UnknownTaskError(_unknown_message("task, family or tag", item, pool)) from None


def _unknown_message(kind: str, given: str, known: list[str]) -> str:
    close = difflib.get_close_matches(given, known, n=3, cutoff=0.4)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown {kind} {given!r}{hint} (run `memobench tasks list` to see them all)"
