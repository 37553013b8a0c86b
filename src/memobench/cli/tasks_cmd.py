"""``memobench tasks``: list, show, stats, validate, catalogue.

Everything here reads task files only; no simulator module is imported, so
these commands run on any machine (``catalogue`` imports the simulator only
to render its stills). Errors the user can cause (an unknown id,
a broken task file) print one message and exit non-zero, never a traceback:
exit code 2 for a bad command-line value, 1 for broken task files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from memobench.cli.common import fail
from memobench.core.bddl_check import BddlError, check_problem
from memobench.core.bddl_names import BddlDeclarationError
from memobench.core.bindings import binding_label
from memobench.core.spec import MemoryOp, TaskSpec, violation_window
from memobench.core.suite import ARENA_FOLDER, TASKS_ROOT, Suite, Task, TaskFileError, UnknownTaskError, load_task
from memobench.core.suite_counts import COUNT_KEYS, GroupStats, format_domain_sizes, suite_stats

app = typer.Typer(help="Inspect and validate the task suite.", no_args_is_help=True)

OP_LETTER = {MemoryOp.STORAGE: "S", MemoryOp.UPDATE: "U", MemoryOp.COMPRESSION: "C"}
INSTRUCTION_WIDTH = 70  # most characters of the instruction `tasks list` shows
MIN_INSTRUCTION_WIDTH = 20

# Errors a task folder can raise on load. load_task wraps most problems in
# TaskFileError, but a malformed BDDL declaration and a file that is not UTF-8
# escape it; they are still the user's file, so they are reported, not raised.
_TASK_FILE_ERRORS = (TaskFileError, BddlDeclarationError, UnicodeDecodeError)

SelectorOption = Annotated[
    str | None,
    typer.Option(
        "--tasks",
        "-t",
        help="Comma-separated task ids (or short ids like T03), families or tags; 'arena' for RoboMemArena's 26. "
        "Default: all (the MEMOBench suite).",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _console() -> Console:
    # Built per call so it writes to the sys.stdout of the moment (tests swap it).
    return Console(highlight=False)


def _load_suite() -> Suite:
    """The packaged tasks of both suites; a broken packaged task is reported, not raised."""
    try:
        return Suite.load(arena=True)
    except _TASK_FILE_ERRORS as e:
        raise fail(
            f"the packaged task suite does not load: {e}\nRun `memobench tasks validate` to list every broken task.",
            1,
        ) from None


def _select(selector: str | None) -> list[Task]:
    suite = _load_suite()
    try:
        return suite.select(selector)
    except UnknownTaskError as e:
        raise fail(str(e)) from None


def _ops(spec: TaskSpec) -> str:
    return " ".join(OP_LETTER[cp.op] for cp in spec.checkpoints)


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def task_summary(task: Task) -> dict[str, Any]:
    """One ``tasks list --json`` entry: id, family, ops, variants, chance, horizon, post-goal
    window, violation names, tags, instruction."""
    spec = task.spec
    return {
        "id": spec.id,
        "family": spec.family.value,
        "checkpoints": _ops(spec),
        "variants": spec.n_variants,
        "chance": spec.chance,
        "horizon": spec.horizon,
        "monitor_steps": spec.monitor_steps,
        "violations": [v.name for v in spec.violations],
        "tags": list(spec.tags),
        "instruction": spec.instruction,
    }


# ------------------------------------------------------------------- list


@app.command("list")
def list_command(tasks: SelectorOption = None, as_json: JsonOption = False) -> None:
    """List tasks: id, family, checkpoint ops (S/U/C), variants, chance, tags, instruction."""
    selected = _select(tasks)
    rows = [task_summary(t) for t in selected]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    console = _console()
    # Give the instruction whatever width the other columns leave (one line per
    # task); Rich alone would shrink every no-wrap column to fit instead.
    others = console.measure(_tasks_table(rows, instruction_width=None)).maximum
    room = max(MIN_INSTRUCTION_WIDTH, console.width - others - 3)
    console.print(_tasks_table(rows, instruction_width=min(room, INSTRUCTION_WIDTH)))


def _suite_title(rows: list[dict[str, Any]]) -> str:
    arena = [r["id"].startswith("A") for r in rows]
    return "arena" if arena and all(arena) else "MEMOBench" if not any(arena) else "MEMOBench and arena"


def _tasks_table(rows: list[dict[str, Any]], instruction_width: int | None) -> Table:
    """The ``tasks list`` table; without ``instruction_width`` it has no instruction column."""
    table = Table(
        title=f"{_suite_title(rows)} tasks ({len(rows)})",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
    )
    for name in ("id", "family", "checkpoints"):
        table.add_column(name, no_wrap=True)
    for name in ("variants", "chance"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("tags")  # the one column that wraps on a narrow terminal
    if instruction_width is not None:
        table.add_column("instruction", no_wrap=True, overflow="ellipsis", max_width=instruction_width)
    for row in rows:
        cells = [
            row["id"],
            row["family"],
            row["checkpoints"],
            str(row["variants"]),
            f"{row['chance']:.2f}",
            ", ".join(row["tags"]),
        ]
        if instruction_width is not None:
            cells.append(_truncate(row["instruction"], instruction_width))
        table.add_row(*cells)
    return table


# ------------------------------------------------------------------- show


@app.command("show")
def show_command(
    task_id: Annotated[str, typer.Argument(help="Task id or short id (T03).")],
    as_json: JsonOption = False,
) -> None:
    """Show one task: instruction, bindings, chance, counting/cue settings and every checkpoint."""
    try:
        task = _load_suite().get(task_id)
    except UnknownTaskError as e:
        raise fail(str(e)) from None
    if as_json:
        payload = {"spec_hash": task.spec_hash, "spec": task.spec.to_jsonable()}
        typer.echo(json.dumps(payload, indent=2))
        return
    console = _console()
    _print_header(console, task)
    _print_bindings(console, task.spec)
    _print_settings(console, task.spec)
    _print_checkpoints(console, task.spec)
    _print_violations(console, task.spec)


def _field(console: Console, label: str, value: str, indent: int = 0) -> None:
    # Text objects, not markup: task text may contain "[...]" (predicate lists).
    # Padding keeps wrapped continuation lines under their field.
    line = Text.assemble((f"{label}: ", "bold"), value)
    console.print(Padding(line, (0, 0, 0, indent), expand=False))


def _print_header(console: Console, task: Task) -> None:
    spec = task.spec
    console.print(Text(f"{spec.id} ({spec.family.value})", style="bold underline"))
    _field(console, "instruction", spec.instruction)
    _field(console, "tags", ", ".join(spec.tags) or "none")
    _field(console, "horizon", f"{spec.horizon} control steps")
    _field(
        console,
        "post-goal window",
        f"{spec.monitor_steps} steps (at least this many between the last required checkpoint and the horizon for a "
        "success; RoboMemArena's protocol: the steps run after it before success ends the episode)",
    )
    _field(console, "folder", str(task.folder))
    _field(console, "spec hash", task.spec_hash)


def _describe_value(value: Any) -> str:
    """A binding value as ``label (key=value, ...)``; labels come from binding_label."""
    label = binding_label({"v": value})["v"]
    if not isinstance(value, dict):
        return json.dumps(label) if isinstance(label, list) else str(label)
    details = ", ".join(f"{k}={v}" for k, v in value.items() if k != "name")
    return f"{label} ({details})" if "name" in value else details


def _print_bindings(console: Console, spec: TaskSpec) -> None:
    if not spec.bindings:
        _field(console, "bindings", "none (only the episode's history tells what was done)")
    else:
        _field(console, "bindings", f"{spec.n_variants} variants, one drawn per episode")
        for name, domain in sorted(spec.bindings.items()):
            _field(console, f"${name}", f"{len(domain)} values", indent=2)
            for value in domain:
                console.print(Padding(Text(f"- {_describe_value(value)}"), (0, 0, 0, 4), expand=False))
    source = "declared" if spec.chance_level is not None else "1 / variants"
    _field(console, "chance level", f"{spec.chance:.3f} ({source})")


def _print_settings(console: Console, spec: TaskSpec) -> None:
    if spec.counting is None:
        _field(console, "counting", "no")
    else:
        c = spec.counting
        _field(
            console,
            "counting",
            f"exactly {c.required} pours of {c.object} over {c.target} "
            f"(a pour counts within {c.near_radius} m of the target; an extra pour fails)",
        )
    if spec.cue is None:
        _field(console, "cue", "none")
    else:
        at = f" at {', '.join(spec.cue.targets)}" if spec.cue.targets else ""
        _field(console, "cue", f"{spec.cue.kind}{at}")
    if spec.notes.strip():
        _field(console, "notes", spec.notes.strip())


def _print_checkpoints(console: Console, spec: TaskSpec) -> None:
    console.print(Text(f"checkpoints ({len(spec.checkpoints)}):", style="bold"))
    for i, cp in enumerate(spec.checkpoints, start=1):
        flag = ", optional" if cp.optional else ""
        console.print(Text(f"  {i}. {cp.id} [{cp.op.value}{flag}]", style="bold"))
        if cp.why:
            _field(console, "why this op", cp.why, indent=5)
        for level in ("coarse", "intermediate", "fine"):
            _field(console, level, cp.text.at(level), indent=5)
        _field(console, "predicate", cp.predicate, indent=5)


def _print_violations(console: Console, spec: TaskSpec) -> None:
    if not spec.violations:
        _field(console, "violations", "none")
        return
    console.print(
        Text(f"violations ({len(spec.violations)}; the episode fails when one holds while active):", style="bold")
    )
    for v in spec.violations:
        console.print(Text(f"  - {v.name} [{violation_window(spec, v)}]", style="bold"))
        _field(console, "what", v.text, indent=4)
        _field(console, "predicate", v.predicate, indent=4)


# ------------------------------------------------------------------ stats


@app.command("stats")
def stats_command(tasks: SelectorOption = None, as_json: JsonOption = False) -> None:
    """Suite statistics per family and in total: checkpoints per memory op, classes, bindings."""
    selected = _select(tasks)
    try:
        stats = suite_stats(selected)
    except BddlDeclarationError as e:
        raise fail(f"{e}\nRun `memobench tasks validate` to find the task.", 1) from None
    if as_json:
        typer.echo(json.dumps(stats.to_jsonable(), indent=2))
        return
    suites = {t.spec.suite for t in selected}
    title = "arena suite statistics" if suites == {"arena"} else "MEMOBench suite statistics"
    table = Table(title=title)
    table.add_column("family", no_wrap=True)
    for key in COUNT_KEYS:
        table.add_column(key.replace("_", " "), justify="right")
    table.add_column("binding domains")
    for name, group in stats.families.items():
        table.add_row(name, *_stats_cells(group))
    table.add_section()
    table.add_row("total", *_stats_cells(stats.total), style="bold")
    console = _console()
    console.print(table)
    _field(console, "object classes", ", ".join(stats.total.object_class_names) or "none")
    _field(console, "fixture classes", ", ".join(stats.total.fixture_class_names) or "none")


def _stats_cells(group: GroupStats) -> list[str]:
    counts = group.counts()
    return [
        *(str(counts[key]) for key in COUNT_KEYS),
        format_domain_sizes(group.binding_domain_sizes),
    ]


# --------------------------------------------------------------- catalogue


@app.command("catalogue")
def catalogue_command(
    out: Annotated[Path, typer.Option(help="The markdown file to write.")] = Path("docs/tasks.md"),
    tasks: SelectorOption = None,
    images: Annotated[
        bool,
        typer.Option(help="Render each task's stills (needs the simulator and EGL); --no-images links existing ones."),
    ] = True,
) -> None:
    """Write the task catalogue: per task its instruction, bindings, chance, checkpoints and stills."""
    from memobench.report.catalogue import catalogue_markdown, render_stills

    selected = _select(tasks)
    image_dir = out.parent / out.stem  # docs/tasks.md -> docs/tasks/
    if images:
        console = _console()
        for task in selected:
            paths = render_stills(task, image_dir)
            console.print(f"{task.id}: " + ", ".join(str(p) for p in paths.values()))
    out.parent.mkdir(parents=True, exist_ok=True)
    # --no-images keeps linking stills rendered earlier (text-only edits need no simulator)
    linked = images or image_dir.is_dir()
    out.write_text(catalogue_markdown(selected, out.stem if linked else None) + "\n")
    typer.echo(f"wrote {out}")


# --------------------------------------------------------------- validate


@dataclass
class Outcome:
    """The result of validating one task folder (or a path that named none)."""

    folder: Path
    task: Task | None = None
    error: str | None = None


class _NoTaskFolders(Exception):
    """A path given to ``validate`` names no task folder; the message says what would."""


def _is_task_folder(path: Path) -> bool:
    return path.is_dir() and any((path / n).is_file() for n in ("task.yaml", "task.bddl"))


def task_folders(path: Path) -> list[Path]:
    """Task folders named by ``path``, sorted.

    ``path`` may be a task folder (or a file in one), a family folder, or a
    root holding ``<family>/<task_id>/`` (and the arena's ``arena/<family>/<task_id>/``,
    also checked). A folder counts as a task folder if
    it holds task.yaml or task.bddl, so a folder missing one file is reported
    rather than skipped. Raises :class:`_NoTaskFolders`.
    """
    if not path.exists():
        raise _NoTaskFolders(f"{path}: no such file or directory")
    if path.is_file() and path.name in ("task.yaml", "task.bddl"):
        path = path.parent
    if _is_task_folder(path):
        return [path]
    for patterns in (("*/*", f"{ARENA_FOLDER}/*/*"), ("*/*",), ("*",)):  # a root, a suite, a family folder
        found = sorted(p for pattern in patterns for p in path.glob(pattern) if _is_task_folder(p))
        if found:
            return found
    raise _NoTaskFolders(
        f"{path}: no task folders found; give a task folder (holding task.yaml and task.bddl) "
        "or a root holding <family>/<task_id>/ folders"
    )


def _check_libero_classes(task: Task) -> None:
    """Every binding's BDDL names a problem class and object classes LIBERO has (from
    :func:`~memobench.sim.registry.known_vocabulary`: no LIBERO import)."""
    from memobench.core.bindings import all_bindings
    from memobench.sim.registry import known_vocabulary

    for binding in all_bindings(task.spec):
        try:
            check_problem(task.bddl(binding), known_vocabulary())
        except BddlError as e:
            label = json.dumps(binding_label(binding), sort_keys=True)
            raise TaskFileError(f"{task.folder / 'task.bddl'} (binding {label}): {e}") from None


def _validate_folder(folder: Path) -> Outcome:
    try:
        task = load_task(folder)
        _check_libero_classes(task)
        return Outcome(folder, task=task)
    except TaskFileError as e:
        return Outcome(folder, error=str(e))
    except BddlDeclarationError as e:
        return Outcome(folder, error=f"{folder / 'task.bddl'}: {e}")
    except UnicodeDecodeError as e:
        return Outcome(folder, error=f"{folder}: a task file is not UTF-8 text ({e})")


def validate_paths(paths: list[Path]) -> list[Outcome]:
    """Validate every task folder named by ``paths``, collecting all errors.

    A folder reached twice is validated once; two folders declaring the same
    id are both loaded, and the second is reported as a duplicate.
    """
    outcomes: list[Outcome] = []
    seen_folders: set[Path] = set()
    first_folder: dict[str, Path] = {}
    for path in paths:
        try:
            folders = task_folders(path)
        except _NoTaskFolders as e:
            outcomes.append(Outcome(path, error=str(e)))
            continue
        for folder in folders:
            if folder.resolve() in seen_folders:
                continue
            seen_folders.add(folder.resolve())
            outcome = _validate_folder(folder)
            if outcome.task is not None:
                earlier = first_folder.setdefault(outcome.task.id, folder)
                if earlier != folder:
                    outcome = Outcome(
                        folder,
                        error=f"{folder}: duplicate task id {outcome.task.id!r}, also declared in {earlier}",
                    )
            outcomes.append(outcome)
    return outcomes


@app.command("validate")
def validate_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PATH",
            help="Task folders or roots holding <family>/<task_id>/. Default: the packaged suite.",
        ),
    ] = None,
) -> None:
    """Check task files without a simulator; report every broken task; exit 1 if any."""
    outcomes = validate_paths(list(paths) if paths else [TASKS_ROOT])
    for outcome in outcomes:
        if outcome.task is not None:
            typer.secho(f"ok    {outcome.task.id}", fg="green")
        else:
            typer.secho(f"FAIL  {outcome.folder}", fg="red")
            for line in (outcome.error or "").splitlines():
                typer.echo(f"      {line}")
    failed = sum(o.task is None for o in outcomes)
    folders = "task folder" if len(outcomes) == 1 else "task folders"
    typer.echo(f"{len(outcomes)} {folders} checked: {len(outcomes) - failed} ok, {failed} failed")
    if failed:
        raise typer.Exit(1)
