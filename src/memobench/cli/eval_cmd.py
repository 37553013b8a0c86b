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
    policy_label,
    select_tasks,
)
from memobench.cli.options import Flags, config_options
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol

PolicyOption = Annotated[
    str | None,
    typer.Option(help="A built-in policy: expert, expert-memoryless, noop, random, remote (a policy server)."),
]


@config_options(protocol=Flags(Protocol), execution=Flags(Execution))
def eval_command(
    *,  # protocol and execution: no default here, they stand for their flags
    tasks: TasksOption = "pilot",
    policy: PolicyOption = None,
    adapter_spec: AdapterSpecOption = None,
    adapter_kwargs: AdapterKwargsOption = "{}",
    num_trials_per_task: Annotated[int, typer.Option(min=1, help="Episodes per task.")] = 2,
    protocol: Protocol,
    execution: Execution,
) -> None:
    """Evaluate a policy on MEMOBench tasks; results go to --out-root."""
    from memobench.cli.progress import RunProgress
    from memobench.cli.summary_table import summary_table
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.evaluation.run_request import RunRequest
    from memobench.evaluation.runner import evaluate
    from memobench.metrics.export import write_summary
    from memobench.policies.adapter import ChunkLengthError

    console = Console()
    selected = select_tasks(tasks)
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
    except (RunFolderError, ChunkLengthError) as e:
        raise fail(str(e)) from None
    console.print(summary_table(write_summary(result.records, out_root)))
    skipped = f" ({result.skipped} already in the ledger)" if result.skipped else ""
    console.print(
        f"Ran {len(result.ran)} episodes{skipped}. Results: [bold]{out_root}[/] "
        "(ledger.jsonl, summary.json, task_summary.csv, episodes.csv)"
    )


def _default_out_root(block: dict, resume: bool) -> Path:
    if resume:
        raise fail("--resume needs the --out-root of the run to continue")
    return Path("runs") / f"{policy_label(block)}-{dt.datetime.now():%Y%m%d-%H%M%S}"
