"""``memobench collect`` and ``memobench data ...``: expert demonstrations and their checks.

The work runs on the evaluation's worker pool (:mod:`memobench.data.jobs`): one job per task
or file, with the same --workers, --backend, retry and progress as ``memobench eval``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from memobench.cli.common import TasksOption, fail, select_tasks
from memobench.cli.options import Flags, config_options
from memobench.evaluation.execution import Execution

app = typer.Typer(help="Check and convert demonstration datasets.", no_args_is_help=True)

CamerasOption = Annotated[str, typer.Option(help="Comma-separated: agentview, wrist.")]
FolderArgument = Annotated[Path, typer.Argument(help="A dataset folder written by `memobench collect`.")]


def _pool_flags(unit: str) -> Flags:
    """The execution flags of a data command whose jobs are ``unit``s (a task, a file)."""
    return Flags(
        Execution,
        only=("workers", "backend", "ray_address", "episode_timeout", "max_attempts"),
        overrides={
            "workers": {"help": f"Processes, one {unit} at a time each (0: in this process)."},
            "episode_timeout": {
                "help": f"Seconds one {unit}'s job may run before its worker counts as hung and is replaced."
            },
            "max_attempts": {"help": f"Executions of a {unit}'s job whose worker dies or hangs."},
        },
    )


def _cameras(text: str) -> tuple[str, ...]:
    from memobench.data.render import IMAGE_KEYS

    cameras = tuple(c.strip() for c in text.split(",") if c.strip())
    unknown = [c for c in cameras if c not in IMAGE_KEYS]
    if unknown or not cameras:
        raise fail(f"unknown camera(s) {', '.join(unknown) or '(none)'}; known: {', '.join(IMAGE_KEYS)}")
    return cameras


@config_options(execution=_pool_flags("task"))
def collect_command(
    *,
    tasks: TasksOption = "pilot",
    episodes: Annotated[int, typer.Option(min=1, help="Successful demos to keep per task.")] = 50,
    seed_base: Annotated[
        int | None,
        typer.Option(help="Attempt a uses seed SEED_BASE + a (default 1,000,000: never an evaluation seed)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Dataset folder: one <task_id>.hdf5 per task.")] = Path("data/demos"),
    execution: Execution,
    image_size: Annotated[
        int,
        typer.Option(
            min=0,
            help="Then render images of this size (0: stay camera-free; `memobench data render` can add them later).",
        ),
    ] = 0,
    cameras: CamerasOption = "agentview,wrist",
    action_noise: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Execute the expert's actions with Gaussian noise of this deviation on the arm's six "
            "dimensions, querying it every step and storing its own actions as labels (0: unperturbed).",
        ),
    ] = 0.0,
    known_outcomes: Annotated[
        Path | None,
        typer.Option(
            help="An outcomes file (`memobench data outcomes`) of an earlier collection with the same "
            "tasks, seed base and noise: the attempts it saw fail are counted as failed without being "
            "run (the same files, less time).",
        ),
    ] = None,
) -> None:
    """Run the scripted expert camera-free and keep its successful episodes as demonstrations."""
    from memobench.cli.progress import RunProgress
    from memobench.data.collect import DEMO_SEED_BASE, MAX_ATTEMPTS_FACTOR, CollectionConflict
    from memobench.data.jobs import DataJobError, collect_dataset

    if out.exists() and not out.is_dir():
        raise fail(f"--out {out} is a file; cannot use it as a dataset folder")
    selected, chosen = select_tasks(tasks), _cameras(cameras)
    base = DEMO_SEED_BASE if seed_base is None else seed_base
    known = None if known_outcomes is None else _known_failures(known_outcomes, selected, base, action_noise)
    start = time.perf_counter()
    try:
        with RunProgress() as progress:
            results = collect_dataset(
                selected,
                episodes,
                out,
                base,
                execution,
                progress,
                image_size,
                chosen,
                command=f"memobench collect --tasks {tasks} --episodes {episodes} --seed-base {base}"
                + (f" --action-noise {action_noise}" if action_noise else ""),
                action_noise=action_noise,
                known_failures=known,
            )
    except OSError as e:
        raise _collect_write_failure(e, out) from None
    except (CollectionConflict, DataJobError) as e:
        raise fail(str(e)) from None
    _print_collections(results, out, base)
    Console().print(f"Wall time {time.perf_counter() - start:.0f} s.")
    if known_outcomes is not None:
        _check_reproduced(known_outcomes, out, [r.task_id for r in results])
    short = [r.task_id for r in results if r.kept < episodes]
    if short:
        raise fail(
            f"fewer than {episodes} successes within {MAX_ATTEMPTS_FACTOR * episodes} attempts: " + ", ".join(short)
        )


def _collect_write_failure(error: OSError, out: Path) -> typer.Exit:
    """A full disk, a read-only folder: one line, and every attempt finished is journalled."""
    where = f"{error.filename}: " if error.filename else f"--out {out}: "
    return fail(
        f"{where}{error.strerror or type(error).__name__}; the attempts finished are kept in {out}: "
        "free the space (or fix the folder) and run the same command again to go on"
    )


def _known_failures(path: Path, tasks: list, seed_base: int, action_noise: float) -> dict[str, frozenset[int]]:
    from memobench.data.outcomes import OutcomesError, known_failures, load_outcomes

    try:
        outcomes = load_outcomes(path)
        return {t.id: known_failures(outcomes, path, t, seed_base, action_noise) for t in tasks}
    except OutcomesError as e:
        raise fail(str(e)) from None


def _check_reproduced(path: Path, out: Path, task_ids: list[str]) -> None:
    """Fail (the files kept) when a task's demos differ from those the outcomes file recorded."""
    from memobench.data.outcomes import load_outcomes, unreproduced

    lines = unreproduced(load_outcomes(path), out, task_ids)
    if lines:
        raise fail(
            f"the demos differ from the collection {path} records (the files are kept; the same seeds "
            "simulated otherwise on this machine, or the experts changed): " + "; ".join(lines)
        )


def _print_collections(results: list, out: Path, base: int) -> None:
    table = Table(title=f"Demonstrations in {out} (seeds {base}+)")
    for column in ("task", "kept", "attempts", "expert SR", "steps", "file"):
        table.add_column(column)
    for r in results:
        table.add_row(r.task_id, str(r.kept), str(r.attempts), f"{r.success_rate:.0%}", str(r.steps), r.path.name)
    Console().print(table)


@app.command("render")
@config_options(execution=_pool_flags("file"))
def render_command(
    *,
    folder: FolderArgument,
    image_size: Annotated[int, typer.Option(min=8, help="Square image size in pixels.")] = 128,
    cameras: CamerasOption = "agentview,wrist",
    render_quality: Annotated[
        Literal["reference", "fast"],
        typer.Option(help="Camera meshes, as `eval --render-quality` (recorded in each file's attributes)."),
    ] = "fast",
    execution: Execution,
) -> None:
    """Add camera images to every demo by replaying its stored states (identical to live frames)."""
    from memobench.cli.progress import RunProgress
    from memobench.data.jobs import DataJobError, render_dataset
    from memobench.data.render import already_rendered

    paths = sorted(folder.glob("*.hdf5")) if folder.is_dir() else []
    if not paths:
        raise fail(f"no <task>.hdf5 files in {folder}")
    chosen = _cameras(cameras)
    # what an earlier (perhaps killed) run finished is kept: the command resumes
    pending = [p for p in paths if not already_rendered(p, image_size, list(chosen), render_quality)]
    start = time.perf_counter()
    try:  # a file that cannot be rendered is left as it was; the others get their images
        with RunProgress() as progress:
            render_dataset(pending, image_size, chosen, execution, progress, quality=render_quality)
    except DataJobError as e:
        raise fail(str(e)) from None
    kept = len(paths) - len(pending)
    Console().print(
        f"Rendered {len(pending)} file(s) at {image_size}x{image_size} in {time.perf_counter() - start:.0f} s"
        + (f"; {kept} already rendered so were kept." if kept else ".")
    )


@app.command("features")
@config_options(execution=_pool_flags("file"))
def features_command(
    *,
    folder: FolderArgument,
    features: Annotated[
        Path | None, typer.Option(help="Where state features are cached (default FOLDER/state-features).")
    ] = None,
    execution: Execution,
) -> None:
    """Compute the state features `train --obs state` reads, on worker processes (train: in its own)."""
    from memobench.cli.progress import RunProgress
    from memobench.data.jobs import DataJobError, featurise_dataset
    from memobench.data.state_features import stale_feature_files

    paths = sorted(folder.glob("*.hdf5")) if folder.is_dir() else []
    if not paths:
        raise fail(f"no <task>.hdf5 files in {folder}")
    features_dir = features or folder / "state-features"
    pending = stale_feature_files(paths, features_dir)  # what an earlier (perhaps killed) run wrote is kept
    start = time.perf_counter()
    try:  # a file that cannot be featurised gets no features; the others do
        with RunProgress() as progress:
            frames = featurise_dataset(pending, features_dir, execution, progress)
    except DataJobError as e:
        raise fail(str(e)) from None
    kept = len(paths) - len(pending)
    Console().print(
        f"Featurised {len(pending)} file(s) ({frames} frames) into {features_dir} in "
        f"{time.perf_counter() - start:.0f} s" + (f"; {kept} already current so were kept." if kept else ".")
    )


@app.command("export")
def export_command(
    folder: FolderArgument,
    out: Annotated[Path, typer.Option(help="Folder for the exported dataset (must not exist or be empty).")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="Export format: lerobot (LeRobot dataset v3.0) or openpi (LeRobot v2.1 with openpi's LIBERO keys "
            "and norm_stats.json, for fine-tuning pi0 / pi0.5; examples/openpi).",
        ),
    ] = "lerobot",
    prompt: Annotated[
        str,
        typer.Option(
            help="openpi: each frame's prompt: instruction, or oracle-coarse|oracle-intermediate|oracle-fine "
            "(the instruction and the memory line, as --memory-oracle sends it)."
        ),
    ] = "instruction",
    environment_state: Annotated[
        bool,
        typer.Option(
            help="Add observation.environment_state (visible object poses, fixture joints: what "
            "`memobench train --obs state` needs; computed in the simulator where not cached)."
        ),
    ] = False,
    features: Annotated[
        Path | None, typer.Option(help="Where state features are cached (default FOLDER/state-features).")
    ] = None,
) -> None:
    """Convert the HDF5 demos to a LeRobot dataset with per-frame memory annotations."""
    from memobench.data import export as exports
    from memobench.data.card import hdf5_card_inputs, write_card

    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise fail("the LeRobot export needs pyarrow: pip install 'memobench[export]'") from None
    try:
        exports.check_options(fmt, prompt, environment_state)
    except ValueError as e:
        raise fail(str(e)) from None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise fail(f"{out} is {'not empty' if out.is_dir() else 'a file'}; choose a new folder")
    existed = out.exists()
    try:
        features_dir = (features or folder / "state-features") if environment_state else None
        info = exports.export(folder, out, fmt=fmt, prompt=prompt, environment_state=features_dir)
    except (FileNotFoundError, ValueError) as e:
        raise fail(str(e)) from None
    except OSError as e:  # a full disk: the half export goes (it was ours: --out was new or empty)
        _remove_export(out, existed)
        where = f"{e.filename}: " if e.filename else ""
        raise fail(
            f"{where}{e.strerror or e}; the partial export in {out} was removed, {folder} is untouched: "
            "free the space and run the same command again"
        ) from None
    command = exports.card_command(folder, out, fmt=fmt, prompt=prompt, environment_state=environment_state)
    write_card(out, hdf5_card_inputs(folder), fmt=fmt, command=command, environment_state=environment_state)
    if fmt == "openpi":
        return _print_summary(exports.openpi_summary(out, info))
    videos = [k for k, v in info["features"].items() if v["dtype"] == "video"]
    Console().print(
        f"LeRobot v3.0 dataset in {out}: {info['total_episodes']} episodes, {info['total_frames']} "
        f"frames, {info['total_tasks']} tasks, videos: {', '.join(videos) or 'none (render first)'}"
    )


def _print_summary(summary: dict) -> None:
    """An export's headline, its table and its notes (memobench.data.export.openpi_summary)."""
    from rich.table import Table

    console = Console()
    console.print(summary["headline"])
    table = Table(*summary["columns"], title=summary["title"])
    for row in summary["rows"]:
        table.add_row(*(f"[red]{cell}[/red]" if cell.startswith("no") else cell for cell in row))
    console.print(table)
    for note in summary["notes"]:
        console.print(f"[yellow]{note}[/yellow]")


def _remove_export(out: Path, keep_folder: bool) -> None:
    """Remove what an interrupted export wrote into ``out`` (and ``out`` itself unless it existed)."""
    import shutil

    if out.is_symlink() or not out.is_dir():
        return
    for child in out.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    if not keep_folder:
        out.rmdir()


@app.command("outcomes")
def outcomes_command(
    folder: FolderArgument,
    out: Annotated[Path, typer.Option(help="The outcomes file to write (JSON).")],
    update: Annotated[
        bool,
        typer.Option(
            help="Keep the tasks an existing --out file lists that FOLDER has not (FOLDER's replace "
            "theirs): for a collection made in parts."
        ),
    ] = False,
) -> None:
    """Which attempts of a finished collection failed, for `memobench collect --known-outcomes`."""
    from memobench.data.outcomes import OutcomesError, load_outcomes, outcomes_of_folder, updated, write_outcomes

    if not folder.is_dir():
        raise fail(f"{folder}: not a folder; give a dataset folder written by `memobench collect`")
    try:
        outcomes = outcomes_of_folder(folder)
        if not outcomes.tasks:
            raise fail(f"{folder}: no finished task file (<task_id>.hdf5)")
        if update and out.exists():
            outcomes = updated(load_outcomes(out), outcomes)
    except OutcomesError as e:
        raise fail(str(e)) from None
    try:
        write_outcomes(outcomes, out)
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise fail(f"{out}: cannot write it ({why}); any earlier file there is kept") from None
    attempts = sum(t.attempts for t in outcomes.tasks.values())
    failed = sum(len(t.failed) for t in outcomes.tasks.values())
    Console().print(f"{out}: {len(outcomes.tasks)} task(s), {attempts} attempts, {failed} failed")


@app.command("validate")
@config_options(execution=_pool_flags("file"))
def validate_command(
    *,
    folder: FolderArgument,
    tasks: Annotated[str | None, typer.Option(help="Tasks that must be present (ids, families, tags).")] = None,
    episodes: Annotated[int | None, typer.Option(help="Demos each task must have at least.")] = None,
    replay: Annotated[bool, typer.Option(help="Replay every demo in the simulator (the real check).")] = True,
    execution: Execution,
) -> None:
    """Check shapes, dtypes, action bounds and key frames, and replay every demo's actions."""
    from memobench.cli.progress import RunProgress
    from memobench.data.jobs import validate_dataset
    from memobench.data.validate import KEY_FRAME_TOLERANCE

    if not folder.is_dir():
        raise fail(f"{folder} is not a folder")
    required = [t.id for t in select_tasks(tasks)] if tasks else []
    start = time.perf_counter()
    with RunProgress() as progress:
        checks = validate_dataset(folder, required, episodes, replay, execution, progress)
    console = Console()
    for c in checks:
        console.print(_check_line(c), highlight=False)
    bad = [c for c in checks if c.problems]
    demos = [c for c in checks if c.demo >= 0]
    console.print(
        f"{len(demos)} demos in {len({c.task_id for c in demos})} task files checked in "
        f"{time.perf_counter() - start:.0f} s; {len(bad)} problem(s). Key frames must match the replay "
        f"within {KEY_FRAME_TOLERANCE} steps."
    )
    if bad or not demos:
        raise typer.Exit(code=1)


def _check_line(c) -> str:
    if c.demo < 0:
        return f"[red]{c.task_id}[/]: " + "; ".join(c.problems)
    drift = "" if c.state_drift is None else f" (state drift {c.state_drift:.1e})"
    return f"{c.task_id} demo {c.demo}: " + ("ok" if not c.problems else "; ".join(c.problems)) + drift
