"""``memobench collect`` and ``memobench data ...``: expert demonstrations and their checks."""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from concurrent.futures import ProcessPoolExecutor, as_completed, wait
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from memobench.cli.common import fail as _fail

app = typer.Typer(help="Check and convert demonstration datasets.", no_args_is_help=True)

CamerasOption = Annotated[str, typer.Option(help="Comma-separated: agentview, wrist.")]
TasksOption = Annotated[str, typer.Option(help="Comma-separated task ids, families or tags (or 'all').")]


def _select(tasks: str):
    from memobench.core.suite import Suite, UnknownTaskError

    try:
        return Suite.load().select(tasks)
    except UnknownTaskError as e:
        raise _fail(str(e)) from None


_worker: dict = {}  # in a collect/render worker process: the command's pid (and collect's progress queue)


def _init_worker(parent_pid: int, updates=None) -> None:
    from memobench.evaluation.worker_guard import die_with_parent

    die_with_parent(parent_pid)  # killed with the command, even mid-unit (as evaluation workers are)
    _worker.update(parent_pid=parent_pid, updates=updates)


# Workers and their queues are spawned, not forked: MuJoCo/EGL state must not be copied into a child.
_SPAWN = multiprocessing.get_context("spawn")


def _worker_pool(workers: int, updates=None) -> ProcessPoolExecutor:
    """A pool of spawned workers that know this command's pid (see :func:`_orphaned`)."""
    return ProcessPoolExecutor(workers, mp_context=_SPAWN, initializer=_init_worker,
                               initargs=(os.getpid(), updates))


def _orphaned() -> bool:
    """In a worker, between units of work: whether the command that started it is gone.

    :func:`_init_worker` already ties a worker to the command; this check ends one
    cleanly between units where the tie is the polling fallback (not Linux).
    """
    return os.getppid() != _worker["parent_pid"]


def _collect_one(task_id: str, episodes: int, out: Path, seed_base: int) -> object:
    """Worker entry point: collect one task, reporting (task, kept, attempts) on the progress queue."""
    from memobench.core.suite import Suite
    from memobench.data.collect import collect_task

    def on_attempt(kept: int, attempts: int) -> None:
        _worker["updates"].put((task_id, kept, attempts))
        if _orphaned():  # the attempt is journaled: a resumed run starts after it
            os._exit(1)

    return collect_task(Suite.load().get(task_id), episodes, out, seed_base=seed_base, on_attempt=on_attempt)


class _Orphaned(Exception):
    pass


def _validate_one(path: Path, episodes: int | None, replay: bool) -> list:
    """Worker entry point: validate one file (stopping between demos if the command is gone)."""
    from memobench.data.validate import validate_file

    def on_demo(_check) -> None:
        if _orphaned():
            os._exit(1)

    return validate_file(path, episodes=episodes, replay=replay, on_demo=on_demo)


def _render_one(path: Path, size: int, cameras: list[str]) -> int:
    """Worker entry point: render one file (left as it was if the worker stops midway)."""
    from memobench.data.render import render_task_file

    def after_demo() -> None:
        if _orphaned():
            raise _Orphaned  # unwinds through render_task_file, which removes its partial copy

    try:
        return render_task_file(path, size, cameras, after_demo=after_demo)
    except _Orphaned:
        os._exit(1)


def collect_command(
    tasks: TasksOption = "pilot",
    episodes: Annotated[int, typer.Option(min=1, help="Successful demos to keep per task.")] = 50,
    seed_base: Annotated[int | None, typer.Option(help="Attempt a uses seed SEED_BASE + a (default 1,000,000: "
                                                       "never an evaluation seed).")] = None,
    out: Annotated[Path, typer.Option(help="Dataset folder: one <task_id>.hdf5 per task.")] = Path("data/demos"),
    workers: Annotated[int, typer.Option(min=1, help="Processes, one task at a time each.")] = 1,
    image_size: Annotated[int, typer.Option(min=0, help="Then render images of this size (0: stay camera-free; "
                                                        "`memobench data render` can add them later).")] = 0,
    cameras: CamerasOption = "agentview,wrist",
) -> None:
    """Run the scripted expert camera-free and keep its successful episodes as demonstrations."""
    from memobench.data.collect import (
        DEMO_SEED_BASE,
        MAX_ATTEMPTS_FACTOR,
        CollectionConflict,
        check_can_continue,
    )

    selected = _select(tasks)
    base = DEMO_SEED_BASE if seed_base is None else seed_base
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _fail(f"--out {out}: cannot use it as a dataset folder ({e.strerror or type(e).__name__})") from None
    try:  # before any work: a folder of another collection is refused, not mixed into
        for task in selected:
            check_can_continue(task, out, base)
    except CollectionConflict as e:
        raise _fail(str(e)) from None
    console = Console(stderr=True)
    start = time.perf_counter()
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[attempts]} attempts"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=console)
    bars = {t.id: progress.add_task(t.id, total=episodes, attempts=0) for t in selected}
    results = []
    with progress:
        def update(task_id: str, kept: int, attempts: int) -> None:
            progress.update(bars[task_id], completed=kept, attempts=attempts)

        if workers == 1:
            from memobench.data.collect import collect_task

            for task in selected:
                results.append(collect_task(task, episodes, out, seed_base=base,
                                            on_attempt=lambda k, a, tid=task.id: update(tid, k, a)))
        else:
            updates = _SPAWN.Queue()
            with _worker_pool(workers, updates) as pool:
                futures = [pool.submit(_collect_one, t.id, episodes, out, base) for t in selected]
                while True:
                    done, pending = wait(futures, timeout=0.5)
                    while True:
                        try:
                            update(*updates.get_nowait())
                        except queue.Empty:
                            break
                    if not pending:
                        break
                results = [f.result() for f in futures]
    table = Table(title=f"Demonstrations in {out} (seeds {base}+)")
    for column in ("task", "kept", "attempts", "expert SR", "steps", "file"):
        table.add_column(column)
    for r in results:
        table.add_row(r.task_id, str(r.kept), str(r.attempts), f"{r.success_rate:.0%}", str(r.steps), r.path.name)
    Console().print(table)
    if image_size:
        render_files([r.path for r in results], image_size, _cameras(cameras), workers)
    from memobench.data.card import hdf5_card_inputs, write_card

    write_card(out, hdf5_card_inputs(out), fmt="hdf5",
               command=f"memobench collect --tasks {tasks} --episodes {episodes} --seed-base {base}")
    short = [r.task_id for r in results if r.kept < episodes]
    Console().print(f"Wall time {time.perf_counter() - start:.0f} s.")
    if short:
        raise _fail(f"fewer than {episodes} successes within {MAX_ATTEMPTS_FACTOR * episodes} attempts: "
                    + ", ".join(short))


def _cameras(text: str) -> list[str]:
    from memobench.data.render import IMAGE_KEYS

    cameras = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in cameras if c not in IMAGE_KEYS]
    if unknown or not cameras:
        raise _fail(f"unknown camera(s) {', '.join(unknown) or '(none)'}; known: {', '.join(IMAGE_KEYS)}")
    return cameras


def render_files(paths: list[Path], size: int, cameras: list[str], workers: int) -> None:
    """Render every file's demos (one file per process), with a progress bar over files."""
    from memobench.data.demo_bddl import DemoFileError
    from memobench.data.render import render_task_file

    console = Console(stderr=True)
    with Progress(TextColumn("[bold]rendering"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=console) as progress:
        bar = progress.add_task("render", total=len(paths))
        try:
            if workers == 1:
                for path in paths:
                    render_task_file(path, size, cameras)
                    progress.advance(bar)
                return
            with _worker_pool(workers) as pool:
                for future in as_completed([pool.submit(_render_one, p, size, cameras) for p in paths]):
                    future.result()
                    progress.advance(bar)
        except DemoFileError as e:  # that file is left as it was; files already rendered keep their images
            raise _fail(str(e)) from None


@app.command("render")
def render_command(
    folder: Annotated[Path, typer.Argument(help="A dataset folder written by `memobench collect`.")],
    image_size: Annotated[int, typer.Option(min=8, help="Square image size in pixels.")] = 128,
    cameras: CamerasOption = "agentview,wrist",
    workers: Annotated[int, typer.Option(min=1, help="Processes, one file at a time each.")] = 1,
) -> None:
    """Add camera images to every demo by replaying its stored states (identical to live frames)."""
    paths = sorted(folder.glob("*.hdf5")) if folder.is_dir() else []
    if not paths:
        raise _fail(f"no <task>.hdf5 files in {folder}")
    start = time.perf_counter()
    render_files(paths, image_size, _cameras(cameras), workers)
    Console().print(f"Rendered {len(paths)} file(s) at {image_size}x{image_size} in {time.perf_counter() - start:.0f} s.")


@app.command("export")
def export_command(
    folder: Annotated[Path, typer.Argument(help="A dataset folder written by `memobench collect`.")],
    out: Annotated[Path, typer.Option(help="Folder for the exported dataset (must not exist or be empty).")],
    fmt: Annotated[str, typer.Option("--format", help="Export format: lerobot (LeRobot dataset v3.0).")]
    = "lerobot",
) -> None:
    """Convert the HDF5 demos to a LeRobot dataset with per-frame memory annotations."""
    from memobench.data.card import hdf5_card_inputs, write_card
    from memobench.data.lerobot import export_lerobot

    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise _fail("the LeRobot export needs pyarrow: pip install 'memobench[export]'") from None
    if fmt != "lerobot":
        raise _fail(f"unknown format {fmt!r}; available: lerobot")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise _fail(f"{out} is {'not empty' if out.is_dir() else 'a file'}; choose a new folder")
    try:
        info = export_lerobot(folder, out)
    except (FileNotFoundError, ValueError) as e:
        raise _fail(str(e)) from None
    write_card(out, hdf5_card_inputs(folder), fmt="lerobot", command=f"memobench collect, then memobench data export {folder} --out {out}")
    videos = [k for k, v in info["features"].items() if v["dtype"] == "video"]
    Console().print(f"LeRobot v3.0 dataset in {out}: {info['total_episodes']} episodes, {info['total_frames']} "
                    f"frames, {info['total_tasks']} tasks, videos: {', '.join(videos) or 'none (render first)'}")


@app.command("validate")
def validate_command(
    folder: Annotated[Path, typer.Argument(help="A dataset folder written by `memobench collect`.")],
    tasks: Annotated[str | None, typer.Option(help="Tasks that must be present (ids, families, tags).")] = None,
    episodes: Annotated[int | None, typer.Option(help="Demos each task must have at least.")] = None,
    replay: Annotated[bool, typer.Option(help="Replay every demo in the simulator (the real check).")] = True,
    workers: Annotated[int, typer.Option(min=1, help="Processes, one file at a time each.")] = 1,
) -> None:
    """Check shapes, dtypes, action bounds and key frames, and replay every demo's actions."""
    from memobench.data.validate import KEY_FRAME_TOLERANCE, missing_tasks, validate_dir

    if not folder.is_dir():
        raise _fail(f"{folder} is not a folder")
    console = Console()

    def show(c) -> None:
        if c.demo < 0:
            console.print(f"[red]{c.task_id}[/]: " + "; ".join(c.problems), highlight=False)
        else:
            console.print(f"{c.task_id} demo {c.demo}: " + ("ok" if not c.problems else "; ".join(c.problems))
                          + ("" if c.state_drift is None else f" (state drift {c.state_drift:.1e})"),
                          highlight=False)

    start = time.perf_counter()
    checks = missing_tasks(folder, [t.id for t in _select(tasks)] if tasks else [])
    for c in checks:
        show(c)
    if workers == 1:  # demo by demo as they are replayed, a file's own problems at the end
        found = validate_dir(folder, episodes=episodes, replay=replay, on_demo=show)
        for c in found:
            if c.demo < 0:
                show(c)
        checks += found
    else:  # file by file as they finish
        with _worker_pool(workers) as pool:
            futures = [pool.submit(_validate_one, p, episodes, replay) for p in sorted(folder.glob("*.hdf5"))]
            for future in as_completed(futures):
                for c in future.result():
                    show(c)
                    checks.append(c)
    bad = [c for c in checks if c.problems]
    demos = [c for c in checks if c.demo >= 0]
    console.print(f"{len(demos)} demos in {len({c.task_id for c in demos})} task files checked in "
                  f"{time.perf_counter() - start:.0f} s; {len(bad)} problem(s). Key frames must match the replay "
                  f"within {KEY_FRAME_TOLERANCE} steps.")
    if bad or not demos:
        raise typer.Exit(code=1)
