"""``memobench certify``: show, per task, that the experts solve it and no memoryless baseline does."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from memobench.cli.common import fail, select_tasks, write_failure
from memobench.cli.options import Flags, config_options
from memobench.cli.progress import RunProgress
from memobench.core.spec import ARENA_SUITE, MEMOBENCH_SUITE
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol
from memobench.report.certify import (
    ADVERSARY_EPISODES,
    BLIND,
    EXPERT_MIN_SR,
    MEMORYLESS_EPISODES,
    MEMORYLESS_MARGIN,
    POLICIES,
    REACTIVE_EPISODES,
    SHORT,
    SLOW_MIN_SR,
    CertificationEvents,
)

# Each policy's run resumes in its own folder under --out-root, without videos.
EXECUTION_FLAGS = Flags(Execution, exclude=("video", "video_every", "out_root", "resume"))
# The scripted policies read no prompt: an oracle would change nothing but the run folders' protocol.
PROTOCOL_FLAGS = Flags(Protocol, exclude=("memory_oracle",))


MemorylessOption = Annotated[
    int,
    typer.Option(
        min=1,
        help="Episodes per task of the memoryless expert (at least --episodes; its seeds include the "
        "experts'). More than the experts': its guessing rate is judged against a 10-point margin.",
    ),
]
ReactiveOption = Annotated[
    int, typer.Option(min=1, help="Episodes per task of the reactive expert (at least --episodes).")
]
AdversaryOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Episodes per task of each adversary (at least --episodes). Default: "
        + ", ".join(f"{p} {n}" for p, n in ADVERSARY_EPISODES.items())
        + ".",
        show_default=False,
    ),
]
OutRootOption = Annotated[
    Path, typer.Option(help="Folder for the policies' runs and the verdicts (resumed if present).")
]
ReportOnlyOption = Annotated[
    bool,
    typer.Option(
        help="Run no episode: judge from the records already in --out-root (a run in progress shows "
        "what is there, and a task whose policies have not run all their episodes is pending, not judged)."
    ),
]
MarkdownOption = Annotated[
    Path | None,
    typer.Option(
        help="Also write the Markdown table here (e.g. docs/certification.md); hand-written notes after the "
        "file's notes marker are kept."
    ),
]


class CertificationProgress(RunProgress, CertificationEvents):
    """Each policy's heading, then its run's progress bar."""

    def policy_started(self, policy: str, episodes_per_task: int) -> None:
        self.console.print(f"[bold]{policy}[/] ({episodes_per_task} episodes per task)")


@config_options(protocol=PROTOCOL_FLAGS, execution=EXECUTION_FLAGS)
def certify_command(
    *,  # protocol and execution: no default here, they stand for their flags
    tasks: Annotated[str, typer.Option(help="Comma-separated task ids, families or tags (or 'all').")] = "pilot",
    episodes: Annotated[int, typer.Option(min=1, help="Episodes per task of the expert and the slow expert.")] = 20,
    memoryless_episodes: MemorylessOption = MEMORYLESS_EPISODES,
    reactive_episodes: ReactiveOption = REACTIVE_EPISODES,
    adversary_episodes: AdversaryOption = None,
    protocol: Protocol,
    out_root: OutRootOption = Path("runs/certify"),
    execution: Execution,
    report_only: ReportOnlyOption = False,
    markdown: MarkdownOption = None,
) -> None:
    """Run the expert, the slow expert, the memoryless and reactive baselines and the adversaries on the
    same seeds; a task passes if the expert succeeds >= 95%, the slow expert >= 90% and each
    memoryless policy <= chance + 10 points. Exits 1 unless every task passes: one that
    fails, is still pending, or needs no memory (chance level near 1: every arena task) does not."""
    from memobench.evaluation.ledger import LedgerError
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.report import certify

    selected = _with_plans(select_tasks(tasks))
    counts = certify.episode_counts(episodes, memoryless_episodes, reactive_episodes, adversary_episodes)
    console = Console()
    start = time.perf_counter()
    try:
        with CertificationProgress(console) as progress:
            certs = certify.run_certification(
                selected, counts, protocol, out_root, progress, execution=execution, run=not report_only
            )
        certify.write_certification_markdown(
            certs,
            _meta(tasks, counts, protocol, selected),
            [p for p in (out_root / "certification.md", markdown) if p],
        )
    except (RunFolderError, LedgerError) as e:  # a bad ledger (--report-only), or one rewritten under the run
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(write_failure(e, out_root / "<policy>" / "ledger.jsonl")) from None
    _print_verdicts(console, certs, counts, protocol.seed)
    console.print(
        f"{sum(c.passed for c in certs)}/{len(certs)} tasks pass. Wall time "
        f"{time.perf_counter() - start:.0f} s. Results: [bold]{out_root}[/] "
        "(certification.md/.json/.csv, one folder per policy)"
    )
    if not all(c.passed for c in certs):
        raise typer.Exit(code=1)


def _with_plans(selected: list) -> list:
    from memobench.experts.plans import plans

    missing = [t.id for t in selected if t.id not in plans()]
    if missing:
        raise fail(f"no expert plan yet for: {', '.join(missing)}")
    return selected


def _meta(tasks: str, counts: dict[str, int], protocol: Protocol, selected: list) -> dict:
    """The settings on the certification page, with the command that reproduces it: ``--protocol``
    when it is not MEMOBench's, then every setting not at that protocol's default. No invocation
    wall time: a resumed run's last invocation may have run nothing."""
    defaults = Protocol(name=protocol.name).model_dump(mode="json")
    changed = {
        k: v
        for k, v in protocol.model_dump(mode="json").items()
        if k not in ("name", "seed", "replan_steps") and v != defaults[k]
    }
    named = f" --protocol {protocol.name}" if protocol.name != Protocol.model_fields["name"].default else ""
    flags = "".join(f" --{k.replace('_', '-')} {v}" for k, v in changed.items())
    # one count for both adversaries, or (unless they are the defaults) no command reproduces them
    same = len({counts[p] for p in ADVERSARY_EPISODES}) == 1
    adversaries = f"--adversary-episodes {counts['adversary-arm']} " if same else ""
    command = (
        f"memobench certify --tasks {tasks}{named} --episodes {counts['expert']} "
        f"--memoryless-episodes {counts['expert-memoryless']} --reactive-episodes {counts['expert-reactive']} "
        + adversaries
        + f"--seed {protocol.seed} --replan-steps {protocol.replan_steps}{flags}"
    )
    return {
        "command": command,
        "date": datetime.date.today().isoformat(),
        "episodes": counts,
        "seed": protocol.seed,
        "replan_steps": protocol.replan_steps,
        "horizon": protocol.horizon,
        "suite": ARENA_SUITE if all(t.spec.suite == ARENA_SUITE for t in selected) else MEMOBENCH_SUITE,
    }


def _short_verdict(c) -> str:
    if c.passed:
        return "[green]pass"
    if c.problems:
        return "[red]FAIL"
    return "[yellow]pending" if c.pending else "[cyan]no memory needed"


def _print_verdicts(console: Console, certs: list, counts: dict[str, int], seed: int) -> None:
    per_policy = ", ".join(f"{SHORT[p]} {n}" for p, n in counts.items())
    table = Table(title=f"Certification (episodes per task: {per_policy}; each policy's seeds from {seed})")
    for column in ("task", "memory", *(SHORT[p] for p in POLICIES), "chance", "verdict"):
        table.add_column(column, justify="left" if column in ("task", "memory", "verdict") else "right")
    for c in certs:
        verdict = _short_verdict(c)
        table.add_row(
            c.task_id, c.memory_type, *(f"{c.rate(p).k}/{c.rate(p).n}" for p in POLICIES), f"{c.chance:.1%}", verdict
        )
    console.print(table)
    for c in certs:
        if c.problems:
            console.print(f"[red]{c.task_id}[/]: {c.verdict}", highlight=False)
        for p in c.low_chance_baselines:
            console.print(
                f"[yellow]{c.task_id}[/]: {p} beats chance {c.chance:.1%} by more than luck explains "
                f"(p(luck) {c.p_above_chance(p):.3f}): the chance level is probably too low",
                highlight=False,
            )
    console.print(
        f"Rule: expert >= {EXPERT_MIN_SR:.0%}, slow expert >= {SLOW_MIN_SR:.0%}, each of "
        f"{' and '.join(BLIND)} <= chance + {MEMORYLESS_MARGIN * 100:.0f} points."
    )
