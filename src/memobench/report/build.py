"""``memobench report``: run folders in, a report folder out.

Layout of the output folder::

    index.html                  tables + embedded figures + per-task videos
    tables.md                   every table in Markdown, in page order
    tables/<name>.{md,csv,tex}  main, main_wilson, oracle (when paired), per_task, bindings (when a task has
                                one), failures, violations (when broken), arena (when run)
    figures/{heatmap,failure_taxonomy,sr_vs_replan}.{png,pdf}
    figures/prefix/<task>.{png,pdf}
    videos/<condition>/<task>/  one success and one failure video per task and condition (copied)
    runs.json                   the conditions, their folders and episode counts

Every path written is checked by :func:`memobench.report.paths.inside` first:
nothing a ledger holds can make the report write outside ``out``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memobench.evaluation.regular_files import NotARegularFile, open_regular
from memobench.report import figures
from memobench.report.arena import arena_table
from memobench.report.html import TaskSection, data_uri, render_page
from memobench.report.oracle import oracle_table
from memobench.report.paths import inside
from memobench.report.result_tables import (
    binding_table,
    failure_table,
    main_table,
    task_table,
    violation_table,
    wilson_table,
)
from memobench.report.runs import ReportError, Run, load_runs, tasks_present
from memobench.report.table_formats import Table, to_csv, to_latex, to_markdown


@dataclass
class ReportResult:
    out: Path
    runs: list[Run]
    tables: list[Table]
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0


def report_tables(runs: Sequence[Run]) -> list[Table]:
    """The tables in page order; the oracle table only when an oracle run pairs up."""
    tables = [main_table(runs), wilson_table(runs)]
    oracle = oracle_table(runs)
    if oracle is not None:
        tables.append(oracle)
    violations = violation_table(runs)
    bindings = binding_table(runs)
    arena = arena_table(runs)
    return [
        *tables,
        task_table(runs),
        *([bindings] if bindings else []),
        failure_table(runs),
        *([violations] if violations else []),
        *([arena] if arena else []),
    ]


def find_videos(run: Run, task_id: str) -> tuple[Path | None, Path | None]:
    """The first (by name) agent-view success and failure video of ``task_id`` in the run's folders."""
    found: dict[str, Path | None] = {"success": None, "failure": None}
    for folder in run.folders:
        video_dir = folder / "videos" / task_id
        if not video_dir.is_dir():
            continue
        if video_dir.is_symlink() or (folder / "videos").is_symlink():
            continue  # a run folder is untrusted: its videos must be its own files
        for outcome in found:
            if found[outcome] is None:
                matches = sorted(
                    p
                    for p in video_dir.glob(f"{task_id}_{outcome}_ep*.mp4")
                    if not p.name.endswith("_wrist.mp4") and not p.is_symlink() and p.is_file()
                )
                found[outcome] = matches[0] if matches else None
    return found["success"], found["failure"]


def build_report(
    folders: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    videos: bool = True,
    arena_in_tables: bool = False,
    link_figures: bool = False,
) -> ReportResult:
    """Write the report of the run ``folders`` into ``out`` (created; existing files replaced).

    ``index.html`` embeds its figures, or with ``link_figures`` links them (``figures/...``,
    relative to the page).

    Arena tasks get their own table (RoboMemArena's scoring); the MEMOBench tables count
    them only with ``arena_in_tables``.

    Raises :class:`~memobench.report.runs.ReportError` for an unusable folder, or a file
    that would land outside ``out``.
    """
    start = time.perf_counter()
    runs = load_runs(folders)
    for run in runs:
        run.include_arena = arena_in_tables
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = ReportResult(out, runs, report_tables(runs))

    inside(out, "tables").mkdir(exist_ok=True)
    for table in result.tables:
        for suffix, render in ((".md", to_markdown), (".csv", to_csv), (".tex", to_latex)):
            path = inside(out, "tables", f"{table.name}{suffix}")
            path.write_text(render(table))
            result.files.append(path)
    combined = inside(out, "tables.md")
    combined.write_text("# MEMOBench report: tables\n\n" + "\n".join(to_markdown(t) for t in result.tables))
    result.files.append(combined)

    main_figures = {}
    for title, draw, stem in (
        ("Metrics heatmap (policy x replan x memory type)", figures.heatmap, "heatmap"),
        ("Success rate vs replan interval", figures.sr_vs_replan, "sr_vs_replan"),
        ("Failure taxonomy per task", figures.failure_bars, "failure_taxonomy"),
    ):
        png, pdf = draw(runs, _figure_stem(out, "figures", stem))
        main_figures[title] = png
        result.files += [png, pdf]
    sections = []
    for task_id in tasks_present(runs):
        png, pdf = figures.prefix_completion(runs, task_id, _figure_stem(out, "figures", "prefix", task_id))
        result.files += [png, pdf]
        section = TaskSection(task_id, png)
        if videos:
            section.videos = _copy_videos(runs, task_id, out)
        sections.append(section)

    generated = f"Generated by memobench report from {sum(len(r.records) for r in runs)} episodes"
    page = inside(out, "index.html")
    figure_src = (lambda png: Path(os.path.relpath(png, out)).as_posix()) if link_figures else data_uri
    page.write_text(render_page(runs, result.tables, main_figures, sections, generated, figure_src))
    runs_json = inside(out, "runs.json")
    runs_json.write_text(
        json.dumps(
            [
                {
                    "condition": r.condition.label,
                    "policy": r.condition.policy,
                    "replan_steps": r.condition.replan_steps,
                    "effective_replan_steps": r.condition.replan_kept,
                    "memory_oracle": r.condition.memory_oracle,
                    "episodes": len(r.records),
                    "planned_episodes": r.planned_episodes,
                    "clipped_actions": r.clipped_actions,
                    "tasks": r.task_ids,
                    "folders": [str(f) for f in r.folders],
                }
                for r in runs
            ],
            indent=2,
        )
        + "\n"
    )
    result.files += [page, runs_json]
    result.seconds = time.perf_counter() - start
    return result


def _figure_stem(out: Path, *parts: str) -> Path:
    """The stem of a figure whose ``.png`` and ``.pdf`` (the files :mod:`figures` writes) are inside ``out``."""
    *folders, name = parts
    for suffix in (".png", ".pdf"):
        try:
            file_name = Path(name).with_suffix(suffix)  # as figures._save names them
        except ValueError:  # "..", "" or a name ending in "/": not a file name
            raise ReportError(f"refusing to write figure {name!r}: not a file name") from None
        inside(out, *folders, file_name)
    return inside(out, *parts)


def _copy_videos(runs: Sequence[Run], task_id: str, out: Path) -> list[tuple[str, str | None, str | None]]:
    """Copy one success and one failure video per condition; returns (label, rel. success, rel. failure)
    for the conditions that have at least one of them."""
    rows = []
    for run in runs:
        success, failure = find_videos(run, task_id)
        if success is None and failure is None:
            continue
        rel: list[str | None] = []
        for video in (success, failure):
            if video is None:
                rel.append(None)
                continue
            target = inside(out, "videos", run.condition.slug, task_id, video.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() or target.stat().st_size != video.stat().st_size:
                _copy_regular(video, target)
            rel.append(target.relative_to(out).as_posix())
        rows.append((run.condition.label, rel[0], rel[1]))
    return rows


def _copy_regular(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` if it is a regular file when opened (not a link swapped in since
    it was found): a report is shared, and must hold nothing from outside its run folders."""
    try:
        fd = open_regular(source, os.O_RDONLY)
    except NotARegularFile as e:
        raise ReportError(str(e)) from None
    with os.fdopen(fd, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
