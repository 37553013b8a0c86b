"""``memobench certify``: show, per task, that the experts solve it and no memoryless baseline does."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memobench.cli.common import fail as _fail
from memobench.evaluation.execution import WORKERS_HELP
from memobench.cli.progress import RunProgress
from memobench.report.certify import MEMORYLESS_EPISODES, CertificationEvents


class CertificationProgress(RunProgress, CertificationEvents):
    """Each policy's heading, then its run's progress bar."""

    def policy_started(self, policy: str, episodes_per_task: int) -> None:
        self.console.print(f"[bold]{policy}[/] ({episodes_per_task} episodes per task)")


def certify_command(
    tasks: Annotated[str, typer.Option(help="Comma-separated task ids, families or tags (or 'all').")] = "pilot",
    episodes: Annotated[int, typer.Option(min=1, help="Episodes per task of the expert and the slow expert.")] = 20,
    memoryless_episodes: Annotated[int, typer.Option(
        min=1, help="Episodes per task of each memoryless baseline (at least --episodes; their seeds include the "
                    "experts'). More than the experts': their rates are judged against a 10-point margin.")]
    = MEMORYLESS_EPISODES,
    seed: Annotated[int, typer.Option(help="Seed base: episode e uses seed + e.")] = 7,
    replan_steps: Annotated[int, typer.Option(min=1, help="Actions executed from each chunk before re-querying.")] = 5,
    out_root: Annotated[Path, typer.Option(help="Folder for the four policies' runs and the verdicts (resumed if "
                                                "present).")]
    = Path("runs/certify"),
    workers: Annotated[int, typer.Option(min=0, help=WORKERS_HELP)] = 1,
    report_only: Annotated[bool, typer.Option(
        help="Run no episode: judge from the records already in --out-root (a run in progress shows "
             "what is there; missing episodes fail the rule).")] = False,
    markdown: Annotated[Path | None, typer.Option(
        help="Also write the Markdown table here (e.g. docs/certification.md); hand-written notes after the "
             "file's notes marker are kept.")]
    = None,
) -> None:
    """Run the expert, the slow expert and the memoryless and reactive baselines on the same seeds
    (the baselines on more); a task passes if the expert succeeds >= 95%, the slow expert >= 90%
    and each baseline <= chance + 10 points. Exits 1 if any task fails."""
    from memobench.core.suite import Suite, UnknownTaskError
    from memobench.evaluation.ledger import LedgerError
    from memobench.evaluation.protocol import Protocol
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.experts.plans import plans
    from memobench.report.certify import (
        BLIND,
        EXPERT_MIN_SR,
        MEMORYLESS_MARGIN,
        POLICIES,
        SHORT,
        SLOW_MIN_SR,
        certification_markdown,
        keep_hand_notes,
        memoryless_episode_count,
        run_certification,
    )

    console = Console()
    try:
        selected = Suite.load().select(tasks)
    except UnknownTaskError as e:
        raise _fail(str(e)) from None
    missing = [t.id for t in selected if t.id not in plans()]
    if missing:
        raise _fail(f"no expert plan yet for: {', '.join(missing)}")
    blind = memoryless_episode_count(episodes, memoryless_episodes)
    start = time.perf_counter()
    try:
        with CertificationProgress(console) as progress:
            certs = run_certification(selected, episodes, Protocol(seed=seed, replan_steps=replan_steps),
                                      out_root, progress, workers=workers, memoryless_episodes=blind,
                                      run=not report_only)
    except (RunFolderError, LedgerError) as e:  # LedgerError: --report-only reads the ledgers as they are
        raise _fail(str(e)) from None
    wall_time = time.perf_counter() - start
    command = (f"memobench certify --tasks {tasks} --episodes {episodes} --memoryless-episodes {blind} "
               f"--seed {seed} --replan-steps {replan_steps}")
    # No invocation wall time on the page: a resumed run's last invocation may have run nothing.
    meta = {"command": command, "date": datetime.date.today().isoformat(),
            "episodes": episodes, "memoryless_episodes": blind, "seed": seed, "replan_steps": replan_steps}
    text = certification_markdown(certs, meta)
    for path in filter(None, (out_root / "certification.md", markdown)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(keep_hand_notes(text, path.read_text() if path.exists() else None))
    table = Table(title=f"Certification (per task: {episodes} episodes of each expert, seeds {seed}.."
                        f"{seed + episodes - 1}; {blind} of each memoryless baseline, seeds {seed}..{seed + blind - 1})")
    for column in ("task", "memory", *(SHORT[p] for p in POLICIES), "chance", "verdict"):
        table.add_column(column, justify="left" if column in ("task", "memory", "verdict") else "right")
    for c in certs:
        verdict = "[green]pass" if c.passed else "[red]FAIL" if c.problems else "[yellow]pending"
        rates = [f"{c.rate(p).k}/{c.rate(p).n}" for p in POLICIES]
        table.add_row(c.task_id, c.memory_type, *rates, f"{c.chance:.1%}", verdict)
    console.print(table)
    for c in certs:
        if c.problems:
            console.print(f"[red]{c.task_id}[/]: {c.verdict}", highlight=False)
        for p in c.low_chance_baselines:
            console.print(f"[yellow]{c.task_id}[/]: {p} beats chance {c.chance:.1%} by more than luck explains "
                          f"(p(luck) {c.p_above_chance(p):.3f}): the chance level is probably too low",
                          highlight=False)
    console.print(f"Rule: expert >= {EXPERT_MIN_SR:.0%}, slow expert >= {SLOW_MIN_SR:.0%}, each of "
                  f"{' and '.join(BLIND)} <= chance + {MEMORYLESS_MARGIN * 100:.0f} points. "
                  f"{sum(c.passed for c in certs)}/{len(certs)} tasks pass. Wall time {wall_time:.0f} s. "
                  f"Results: [bold]{out_root}[/] (certification.md/.json/.csv, one folder per policy)")
    if not all(c.passed for c in certs):
        raise typer.Exit(code=1)
