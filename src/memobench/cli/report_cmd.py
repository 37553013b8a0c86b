"""``memobench report``, ``compare``, ``sweep``, ``annotations export`` and ``kappa``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memobench.cli.common import (
    AdapterKwargsOption,
    AdapterSpecOption,
    TasksOption,
    fail,
    load_policy,
    parse_kwargs,
    select_tasks,
    write_failure,
)
from memobench.cli.options import Flags, config_options
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_folder import policy_label

annotations_app = typer.Typer(help="Blind relabelling sheets for annotation agreement.", no_args_is_help=True)


def report_command(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run folders (--out-root of `memobench eval`).")],
    out: Annotated[Path, typer.Option(help="Report folder (created; files in it are replaced).")] = Path("report"),
    videos: Annotated[bool, typer.Option(help="Copy one success and one failure video per task and condition.")] = True,
    arena_in_tables: Annotated[
        bool, typer.Option(help="Count arena tasks in the MEMOBench tables too (they always get the arena table).")
    ] = False,
    link_figures: Annotated[
        bool,
        typer.Option(
            help="Link the figures from index.html (figures/...) instead of embedding them: a smaller page "
            "that must stay beside its figures folder."
        ),
    ] = False,
) -> None:
    """Tables (Markdown, CSV, LaTeX), figures (PNG, PDF) and index.html from the runs' ledgers."""
    from rich.table import Table as RichTable

    from memobench.report.build import build_report
    from memobench.report.result_tables import MAIN_METRICS
    from memobench.report.runs import ReportError
    from memobench.report.table_formats import pct

    console = Console()
    try:
        result = build_report(run_dirs, out, videos=videos, arena_in_tables=arena_in_tables, link_figures=link_figures)
    except ReportError as e:
        raise fail(str(e)) from None
    # The full main table is wide (4 metrics x types): the terminal gets the macro columns.
    summary = RichTable(title="Macro averages over memory types (%); full tables in the report")
    for name in ("condition", "episodes", "SR (all)", *(f"macro {m}" for m in MAIN_METRICS)):
        summary.add_column(name, justify="left" if name == "condition" else "right")
    for run in result.runs:
        s = run.summary
        summary.add_row(
            run.condition.label,
            run.episodes_label,
            pct(s["overall"]["SR"]["value"]),
            *(pct(s["macro"][m]) for m in MAIN_METRICS),
        )
    console.print(summary)
    for warning in filter(None, (run.partial_warning for run in result.runs)):
        console.print(f"[yellow]{warning}", highlight=False)
    arena = next((t for t in result.tables if t.name == "arena"), None)
    if arena is not None:  # its macro rows: RoboMemArena's headline numbers
        for row in arena.rows:
            if row[1].startswith("macro"):
                console.print(f"arena, {row[0]}: {row[1]}, {row[3]} episodes: CSR {row[4]}%, TSR {row[5]}%")
    episodes = sum(len(r.records) for r in result.runs)
    console.print(
        f"Report of {len(result.runs)} condition(s), {episodes} episodes in {result.seconds:.1f} s: "
        f"[bold]{out / 'index.html'}[/] ({len(result.files)} files)"
    )


def compare_command(
    run_a: Annotated[Path, typer.Argument(help="Baseline run folder (A).")],
    run_b: Annotated[Path, typer.Argument(help="Run folder compared against it (B).")],
    out: Annotated[Path | None, typer.Option(help="Also write compare.md/.csv/.json here.")] = None,
    samples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 10_000,
    only_significant: Annotated[bool, typer.Option(help="Print only rows with p < 0.05.")] = False,
) -> None:
    """Paired comparison of run B with run A on the seeds both ran.

    Per task, per memory type and over all episodes, for each metric: the difference B - A
    with an exact McNemar test (SR, TSR) or a paired bootstrap (rates); * marks p < 0.05.
    """
    from rich.table import Table as RichTable

    from memobench.report.compare import compare_records, comparison_table, write_comparison
    from memobench.report.runs import ReportError, read_run_folder

    try:
        cond_a, _, records_a = read_run_folder(run_a)
        cond_b, _, records_b = read_run_folder(run_b)
    except ReportError as e:
        raise fail(str(e)) from None
    rows = compare_records(records_a, records_b, samples=samples)
    if not rows:
        raise fail(f"{run_a} and {run_b} share no (task, seed) episode; nothing to compare")
    label_a, label_b = f"{cond_a.label} ({run_a})", f"{cond_b.label} ({run_b})"
    table = comparison_table(rows, label_a, label_b)
    task_ids = {r.task_id for r in records_a}
    rich = RichTable(title=table.title)
    for i, name in enumerate(table.header):
        rich.add_column(name, justify="left" if i in (0, 1, 8) else "right")
    for c, cells in zip(rows, table.rows, strict=True):
        if only_significant and not c.significant:
            continue
        per_task = c.task in task_ids  # dimmed; the type and all rows are the summary
        rich.add_row(*cells, style="bold" if c.significant else ("dim" if per_task else None))
    console = Console()
    console.print(rich)
    console.print(table.notes, highlight=False)
    if out is not None:
        write_comparison(out, rows, table, label_a, label_b)
        console.print(f"Written: [bold]{out}[/] (compare.md, compare.csv, compare.json)")


# Every run of a sweep resumes in its own folder under --out-root.
SWEEP_EXECUTION_FLAGS = Flags(
    Execution,
    exclude=("resume",),
    overrides={"out_root": {"help": "Sweep folder (default runs/sweep-<policy>); re-running resumes."}},
)


@config_options(protocol=Flags(Protocol, exclude=("replan_steps", "memory_oracle")), execution=SWEEP_EXECUTION_FLAGS)
def sweep_command(
    *,  # protocol and execution: no default here, they stand for their flags
    policy: Annotated[str | None, typer.Option(help="A built-in policy (see `memobench eval --help`).")] = None,
    adapter_spec: AdapterSpecOption = None,
    adapter_kwargs: AdapterKwargsOption = "{}",
    tasks: TasksOption = "pilot",
    num_trials_per_task: Annotated[int, typer.Option(min=1, help="Episodes per task and run.")] = 2,
    replan_steps: Annotated[str, typer.Option(help="Comma-separated replan intervals.")] = "5,20,35,50",
    oracle: Annotated[bool, typer.Option(help="Also run the three oracle levels at every interval.")] = False,
    protocol: Protocol,
    execution: Execution,
    report: Annotated[bool, typer.Option(help="Write the report to <out-root>/report at the end.")] = True,
) -> None:
    """Evaluate one policy at several replan intervals (and oracle levels), resumably, then report."""
    from memobench.cli.progress import SweepProgress
    from memobench.evaluation.ledger import LedgerError
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.policies.adapter import ChunkLengthError
    from memobench.report.runs import ReportError
    from memobench.report.sweep import ORACLE_LEVELS, REPORT_DIRNAME, parse_replan_steps, run_sweep

    try:
        intervals = parse_replan_steps(replan_steps)
    except ValueError as e:
        raise fail(str(e)) from None
    selected = select_tasks(tasks)
    adapter, block = load_policy(policy, adapter_spec, parse_kwargs(adapter_kwargs))  # fails early on a bad spec
    label = policy_label(block)
    root = execution.out_root or Path("runs") / f"sweep-{label}"
    try:
        with SweepProgress(label, root, Console()) as progress:
            result = run_sweep(
                selected,
                num_trials_per_task,
                protocol,
                execution,
                block,
                adapter,
                root,
                label,
                intervals,
                ORACLE_LEVELS if oracle else (),
                report=report,
                events=progress,
            )
    except (ChunkLengthError, RunFolderError, ReportError, LedgerError) as e:  # one line, not a traceback
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(write_failure(e, root / "<run>" / "ledger.jsonl")) from None
    if result.report_seconds is not None:
        Console().print(f"Report: [bold]{root / REPORT_DIRNAME / 'index.html'}[/] ({result.report_seconds:.1f} s)")


@annotations_app.command("export")
def annotations_export_command(
    out: Annotated[Path, typer.Option(help="Folder for sheet.csv, key.csv and INSTRUCTIONS.md.")] = Path("annotations"),
    tasks: Annotated[str, typer.Option(help="Comma-separated task ids, families or tags.")] = "all",
    seed: Annotated[int, typer.Option(help="Seed of the row shuffle.")] = 0,
) -> None:
    """Write a blind relabelling sheet: every checkpoint's texts, shuffled, op label hidden."""
    from memobench.report.annotations import export_sheet

    selected = select_tasks(tasks)
    sheet, key = export_sheet(selected, out, seed=seed)
    n = sum(len(t.spec.checkpoints) for t in selected)
    Console().print(
        f"{n} checkpoints of {len(selected)} tasks: give [bold]{sheet}[/] (and INSTRUCTIONS.md) to each "
        f"annotator; keep [bold]{key}[/] away from them. Then: memobench kappa SHEETS... --key {key}"
    )


def kappa_command(
    sheets: Annotated[list[Path], typer.Argument(help="Filled sheets, one per annotator (two or more).")],
    key: Annotated[
        Path | None,
        typer.Option(help="key.csv from `annotations export` (default: next to the first sheet, if present)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Also write kappa.md and kappa.json here.")] = None,
) -> None:
    """Fleiss' kappa over annotators' relabelling sheets.

    Also per-category agreement, observed vs chance agreement, and the majority label
    compared with the suite's labels.
    """
    from memobench.report.annotations import (
        SheetError,
        agreement,
        agreement_markdown,
        read_key,
        read_sheet,
    )

    try:
        labels = [read_sheet(path) for path in sheets]
        key_path = key or (sheets[0].parent / "key.csv")
        answers = read_key(key_path) if (key is not None or key_path.exists()) else None
        result = agreement(labels, names=[str(p) for p in sheets], key=answers)
    except SheetError as e:
        raise fail(str(e)) from None
    text = agreement_markdown(result)
    console = Console()
    console.print(text, highlight=False)
    if answers is None:
        console.print(f"[yellow]no key ({key_path} not found): consensus not compared with the suite's labels")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "kappa.md").write_text(text)
        (out / "kappa.json").write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        console.print(f"Written: [bold]{out}[/] (kappa.md, kappa.json)")
