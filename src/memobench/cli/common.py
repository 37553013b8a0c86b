"""What every command shares: the error exit, task selection, policy loading, JSON kwargs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

DEFAULT_POLICY = "expert"

TasksOption = Annotated[str, typer.Option(help="Comma-separated task ids, families or tags (or 'all').")]
AdapterSpecOption = Annotated[str | None, typer.Option(help="Your adapter: path/file.py:factory or module:factory.")]
AdapterKwargsOption = Annotated[str, typer.Option(help="JSON object passed to the adapter factory.")]


def write_failure(error: OSError, ledgers: Path | str) -> str:
    """The one-line error for a run whose files could not be written (a full disk, a folder gone
    read-only): what failed, and that the finished episodes in ``ledgers`` are kept."""
    where = f"{error.filename}: " if error.filename else ""
    return (
        f"{where}{error.strerror or error}; the episodes recorded in {ledgers} are kept: "
        "free the space (or fix the folder) and run the same command again to go on"
    )


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the exit to raise: ``raise fail(...)``.

    Exit code 2 (misuse: bad input, nothing written or lost) unless ``code`` says otherwise.
    """
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=code)


def select_tasks(selection: str):
    """The tasks named by ``selection`` (ids, families, tags, 'all': MEMOBench's; 'arena': the second
    suite); exits 2 on an unknown name."""
    from memobench.core.suite import Suite, UnknownTaskError

    try:
        return Suite.load(arena=True).select(selection)
    except UnknownTaskError as e:
        raise fail(str(e)) from None


def parse_kwargs(text: str) -> dict[str, Any]:
    """``--adapter-kwargs`` as a dict; exits 2 on invalid JSON or a non-object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise fail(f"--adapter-kwargs is not valid JSON ({e.msg} at column {e.colno}): {text}") from None
    if not isinstance(value, dict):
        raise fail(f"--adapter-kwargs must be a JSON object like '{{\"key\": 1}}', got {type(value).__name__}")
    return value


def load_policy(policy: str | None, adapter_spec: str | None, kwargs: dict[str, Any]):
    """(adapter, the policy block of run.json); exits 2 with a clear message on any failure."""
    from memobench.policies.loader import AdapterSpecError, build_adapter, builtin_spec

    if policy and adapter_spec:
        raise fail("give either --policy or --adapter-spec, not both")
    try:
        if adapter_spec:
            return build_adapter(adapter_spec, kwargs), {"adapter_spec": adapter_spec, "adapter_kwargs": kwargs}
        name = policy or DEFAULT_POLICY
        return build_adapter(builtin_spec(name), kwargs), {"name": name, "adapter_kwargs": kwargs}
    except AdapterSpecError as e:
        raise fail(str(e)) from None
