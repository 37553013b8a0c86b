"""``memobench eval``: run a policy on tasks and write the output folder (docs/protocol.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from memobench.cli.common import (
    DEFAULT_POLICY,
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
from memobench.policies.loader import BUILTIN_POLICIES

PolicyOption = Annotated[
    str | None,
    typer.Option(help=f"A built-in policy: {', '.join(BUILTIN_POLICIES)} (remote: a policy server)."),
]


@config_options(protocol=Flags(Protocol), execution=Flags(Execution))
def eval_command(
    *,  # protocol and execution: no default here, they stand for their flags
    tasks: TasksOption = "pilot",
    policy: PolicyOption = None,
    adapter_spec: AdapterSpecOption = None,
    adapter_kwargs: AdapterKwargsOption = "{}",
    num_trials_per_task: Annotated[int, typer.Option(min=1, help="Episodes per task.")] = 2,
    task_start: Annotated[
        int | None, typer.Option(min=1, max=26, help="Only arena tasks numbered from this one (RoboMemArena's 1-26).")
    ] = None,
    task_end: Annotated[
        int | None, typer.Option(min=1, max=26, help="Only arena tasks numbered up to this one (inclusive).")
    ] = None,
    protocol: Protocol,
    execution: Execution,
) -> None:
    """Evaluate a policy on MEMOBench tasks; results go to --out-root."""
    from memobench.cli.progress import RunProgress
    from memobench.evaluation.ledger import LedgerError
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.evaluation.run_request import RunRequest
    from memobench.evaluation.runner import evaluate
    from memobench.policies.adapter import ChunkLengthError

    console = Console()
    selected = _number_range(select_tasks(tasks), task_start, task_end)
    adapter, block = load_policy(policy, adapter_spec, parse_kwargs(adapter_kwargs))
    if not (policy or adapter_spec):
        console.print(
            f"[dim]No policy given: evaluating the built-in '{DEFAULT_POLICY}' policy "
            "(the scripted expert, camera-free). Bring yours with --adapter-spec.[/]"
        )
    out_root = execution.out_root or _default_out_root(block, execution.resume)
    request = RunRequest(
        tasks=selected,
        num_trials_per_task=num_trials_per_task,
        protocol=protocol,
        out_root=out_root,
        policy=block,
        **execution.request_fields(),
    )
    try:  # a --replan-steps above the policy's declared chunk is refused before anything is written
        with RunProgress() as progress:
            result = evaluate(request, adapter, progress)
        files = _write_results(console, result.records, selected, protocol, execution, out_root)
    except (RunFolderError, ChunkLengthError, LedgerError) as e:
        raise fail(str(e)) from None
    except OSError as e:  # a full disk, a folder gone read-only: the ledger keeps what finished
        raise fail(write_failure(e, out_root / "ledger.jsonl")) from None
    skipped = f" ({result.skipped} already in the ledger)" if result.skipped else ""
    console.print(f"Ran {len(result.ran)} episodes{skipped}. Results: [bold]{out_root}[/] ({files})")


def _write_results(console, records, selected, protocol: Protocol, execution: Execution, out_root: Path) -> str:
    """Write the summary files (and under RoboMemArena's protocol its four files); print the tables;
    return the names written."""
    from memobench.cli.summary_table import summary_table
    from memobench.metrics.arena import write_arena_files
    from memobench.metrics.export import MEMOBENCH_SUMMARY_JSON, SUMMARY_JSON, write_summary

    arena = protocol.name == "robomemarena"
    summary_json = MEMOBENCH_SUMMARY_JSON if arena else SUMMARY_JSON  # RoboMemArena's summary.json is its own
    console.print(summary_table(write_summary(records, out_root, summary_json)))
    files = f"ledger.jsonl, {summary_json}, task_summary.csv, episodes.csv"
    if arena:
        agg = write_arena_files(records, selected, protocol, out_root, videos=execution.video.value != "none")
        console.print(
            f"RoboMemArena: {agg['num_tasks']} tasks, {agg['num_episodes']} episodes, macro average score "
            f"{agg['macro_average_score_pct']}%, macro TSR {agg['macro_tsr_success_rate_pct']}%"
        )
        files += ", and RoboMemArena's episodes.tsv, task_summary.tsv, summary.json, aggregate.json"
    return files


def _number_range(selected: list, start: int | None, end: int | None) -> list:
    """The selected arena tasks numbered ``start``..``end`` (RoboMemArena's run-all range); exits 2 on misuse."""
    from memobench.core.suite import arena_number

    if start is None and end is None:
        return selected
    if start is not None and end is not None and start > end:
        raise fail(f"--task-start {start} is after --task-end {end}")
    other = [t.id for t in selected if arena_number(t.id) is None]
    if other:
        raise fail(f"--task-start/--task-end number arena tasks only; the selection also has {', '.join(other[:3])}")
    lo, hi = start or 1, end or 26
    chosen = [t for t in selected if lo <= (arena_number(t.id) or 0) <= hi]
    if not chosen:
        raise fail(f"no selected arena task is numbered {lo}-{hi}")
    return chosen


def _default_out_root(block: dict, resume: bool) -> Path:
    if resume:
        raise fail("--resume needs the --out-root of the run to continue")
    return Path("runs") / f"{policy_label(block)}-{dt.datetime.now():%Y%m%d-%H%M%S}"
