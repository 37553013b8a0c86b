"""``memobench eval``: run a policy on tasks and write the output folder (docs/protocol.md)."""

from __future__ import annotations

import datetime as dt
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from memobench.core.spec import LanguageLevel

DEFAULT_TASKS = "pilot"
DEFAULT_POLICY = "expert"


class Backend(StrEnum):
    LOCAL = "local"
    RAY = "ray"


class VideoMode(StrEnum):
    NONE = "none"
    FAILURES = "failures"
    ALL = "all"


WORKERS_HELP = ("Episodes run in this many worker processes (same results); a policy that kills its process "
                "fails only its episode. 0: in this process (for debuggers; a policy that kills the process "
                "ends the run).")


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code=2)


def _parse_kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise _fail(f"--adapter-kwargs is not valid JSON ({e.msg} at column {e.colno}): {text}") from None
    if not isinstance(value, dict):
        raise _fail(f"--adapter-kwargs must be a JSON object like '{{\"key\": 1}}', got {type(value).__name__}")
    return value


def _load_policy(policy: str | None, adapter_spec: str | None, kwargs: dict[str, Any]):
    """(adapter, the policy block of run.json); exits with a clear message on any failure."""
    from memobench.policies.loader import AdapterSpecError, build_adapter, builtin_spec

    if policy and adapter_spec:
        raise _fail("give either --policy or --adapter-spec, not both")
    try:
        if adapter_spec:
            return build_adapter(adapter_spec, kwargs), {"adapter_spec": adapter_spec, "adapter_kwargs": kwargs}
        name = policy or DEFAULT_POLICY
        return build_adapter(builtin_spec(name), kwargs), {"name": name, "adapter_kwargs": kwargs}
    except AdapterSpecError as e:
        raise _fail(str(e)) from None


def eval_command(
    tasks: Annotated[str, typer.Option(help="Comma-separated task ids, families or tags (or 'all').")] = DEFAULT_TASKS,
    policy: Annotated[str | None, typer.Option(help="A built-in policy: expert, expert-memoryless, noop, random, remote (a policy server).")] = None,
    adapter_spec: Annotated[str | None, typer.Option(help="Your adapter: path/file.py:factory or module:factory.")] = None,
    adapter_kwargs: Annotated[str, typer.Option(help="JSON object passed to the adapter factory.")] = "{}",
    num_trials_per_task: Annotated[int, typer.Option(min=1, help="Episodes per task.")] = 2,
    seed: Annotated[int, typer.Option(help="Seed base: episode e uses seed + e.")] = 7,
    replan_steps: Annotated[int, typer.Option(min=1, help="Actions executed from each chunk before re-querying (at most the policy's declared chunk length; a shorter chunk runs whole, then the policy is queried again).")] = 5,
    horizon: Annotated[int | None, typer.Option(min=1, help="Control steps per episode (default: each task's own, at least 1200; overriding it is for diagnostics).")] = None,
    stabilization_steps: Annotated[int, typer.Option(min=0, help="No-op steps before the policy acts.")] = 10,
    resize_size: Annotated[int, typer.Option(min=8, help="Policy images are SIZE x SIZE (aspect-preserving pad).")] = 224,
    memory_oracle: Annotated[LanguageLevel | None, typer.Option(help="Append completed checkpoint texts to the prompt.")] = None,
    extra_pour_monitor_steps: Annotated[int, typer.Option("--extra-pour-monitor-steps", "--post-stage-steps", min=0,
                                                          help="Steps watched for an extra pour after the required ones.")] = 30,
    monitor_steps: Annotated[int | None, typer.Option(min=0, help="Post-goal window: steps run after the last required checkpoint before success is declared (default: each task's own; overriding it is for diagnostics).")] = None,
    fail_on_extra_pour: Annotated[bool, typer.Option(help="Fail counting tasks on an extra pour (disable for diagnostics only).")] = True,
    adapter_timeout: Annotated[float, typer.Option(min=0, help="Seconds an adapter call may take (0 = no limit).")] = 300.0,
    clip_actions: Annotated[bool, typer.Option(help="Clip actions outside [-1, 1] into the range (recorded in run.json); by default such a chunk fails its episode as an adapter_error.")] = False,
    video: Annotated[VideoMode, typer.Option(help="Record videos of no, failed or all episodes.")] = VideoMode.NONE,
    video_every: Annotated[int, typer.Option(min=0, help="Videos also get a frame every N steps between policy queries (0: only the frames the policy saw).")] = 0,
    out_root: Annotated[Path | None, typer.Option(help="Output folder (default: runs/<policy>-<time>).")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the run in --out-root, skipping finished episodes.")] = False,
    workers: Annotated[int, typer.Option(min=0, help=WORKERS_HELP)] = 1,
    backend: Annotated[Backend, typer.Option(help="Where workers run: this machine, or Ray (pip install 'memobench[ray]').")] = Backend.LOCAL,
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address for --backend ray (default: start a local Ray).")] = None,
    episode_timeout: Annotated[float | None, typer.Option(min=1, help="Seconds an episode may run before its worker counts as hung and is replaced.")] = None,
    max_attempts: Annotated[int, typer.Option(min=1, help="Executions of an episode whose worker dies or hangs (policy errors are never retried).")] = 3,
) -> None:
    """Evaluate a policy on MEMOBench tasks; results go to --out-root."""
    from memobench.cli.progress import RunProgress
    from memobench.cli.summary_table import summary_table
    from memobench.core.suite import Suite, UnknownTaskError
    from memobench.evaluation.protocol import Protocol
    from memobench.evaluation.run_folder import RunFolderError
    from memobench.evaluation.run_request import RunRequest
    from memobench.evaluation.runner import evaluate
    from memobench.metrics.export import write_summary
    from memobench.policies.adapter import ChunkLengthError

    console = Console()
    try:
        selected = Suite.load().select(tasks)
    except UnknownTaskError as e:
        raise _fail(str(e)) from None
    adapter, policy_block = _load_policy(policy, adapter_spec, _parse_kwargs(adapter_kwargs))
    if not (policy or adapter_spec):
        console.print(f"[dim]No policy given: evaluating the built-in '{DEFAULT_POLICY}' policy "
                      "(the scripted expert, camera-free). Bring yours with --adapter-spec.[/]")
    label = policy_block.get("name") or Path(policy_block["adapter_spec"].split(":")[0]).stem
    if out_root is None:
        if resume:
            raise _fail("--resume needs the --out-root of the run to continue")
        out_root = Path("runs") / f"{label}-{dt.datetime.now():%Y%m%d-%H%M%S}"
    protocol = Protocol(
        seed=seed, replan_steps=replan_steps, horizon=horizon, stabilization_steps=stabilization_steps,
        resize_size=resize_size, memory_oracle=memory_oracle, extra_pour_monitor_steps=extra_pour_monitor_steps,
        fail_on_extra_pour=fail_on_extra_pour, adapter_timeout=adapter_timeout, monitor_steps=monitor_steps,
        clip_actions=clip_actions,
    )
    if ray_address and backend is not Backend.RAY:
        raise _fail("--ray-address needs --backend ray")
    try:
        request = RunRequest(tasks=selected, num_trials_per_task=num_trials_per_task, protocol=protocol,
                             out_root=out_root, policy=policy_block, video=video.value, video_every=video_every,
                             resume=resume, workers=workers, backend=backend.value, ray_address=ray_address,
                             episode_timeout=episode_timeout, max_attempts=max_attempts)
    except ValueError as e:  # flags that do not go together
        raise _fail(str(e)) from None
    try:  # a --replan-steps above the policy's declared chunk is refused before anything is written
        with RunProgress() as progress:
            result = evaluate(request, adapter, progress)
    except (RunFolderError, ChunkLengthError) as e:
        raise _fail(str(e)) from None
    console.print(summary_table(write_summary(result.records, out_root)))
    skipped = f" ({result.skipped} already in the ledger)" if result.skipped else ""
    console.print(f"Ran {len(result.ran)} episodes{skipped}. Results: [bold]{out_root}[/] "
                  "(ledger.jsonl, summary.json, task_summary.csv, episodes.csv)")
