"""``memobench serve``: expose any adapter as a websocket policy server (openpi-client convention)."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer
from rich.console import Console

from memobench.cli.common import fail, load_policy, parse_kwargs
from memobench.policies.serve_guard import TOKEN_ENV


def serve_command(
    policy: Annotated[str | None, typer.Option(help="A built-in policy: noop, random.")] = None,
    adapter_spec: Annotated[
        str | None, typer.Option(help="Your adapter: path/file.py:factory or module:factory.")
    ] = None,
    adapter_kwargs: Annotated[str, typer.Option(help="JSON object passed to the adapter factory.")] = "{}",
    host: Annotated[str, typer.Option(help="Address to bind (127.0.0.1: this machine only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    per_connection: Annotated[
        bool,
        typer.Option(
            help="An adapter of its own for every client (a policy with per-episode state served to several workers)."
        ),
    ] = False,
    max_frame_mb: Annotated[
        float,
        typer.Option(
            min=0.001, help="Largest message a client may send, in MiB; a larger one closes its connection unread."
        ),
    ] = 64.0,
    # The token is best given through the environment: a command-line value shows in the process list.
    token: Annotated[
        str | None,
        typer.Option(
            envvar=TOKEN_ENV,
            show_envvar=True,
            help=(
                "Clients must present this token: memobench's client sends $" + TOKEN_ENV + "; others send "
                "'Authorization: Bearer TOKEN' or ?token=TOKEN."
            ),
        ),
    ] = None,
) -> None:
    """Serve a policy; evaluate it from anywhere with --policy remote --adapter-kwargs '{"port": PORT}'."""
    from memobench.policies.loader import policy_factory
    from memobench.policies.remote import PolicyServer

    if not (policy or adapter_spec):
        raise fail("give --policy or --adapter-spec: the policy to serve")
    adapter, block = load_policy(policy, adapter_spec, parse_kwargs(adapter_kwargs))
    console = Console(stderr=True)
    try:
        server = PolicyServer(
            adapter,
            host,
            port,
            per_connection=policy_factory(block) if per_connection else None,
            announce=lambda message: console.print(f"[yellow]{message}"),
            max_frame_bytes=int(max_frame_mb * 2**20),
            token=token or None,
        )
    except ValueError as e:
        raise fail(str(e)) from None
    label = block.get("name") or block.get("adapter_spec")
    sharing = "an adapter per client" if per_connection else "one adapter shared by all clients"
    guard = "token required" if token else "no token (anyone who reaches the port may query it)"
    console.print(
        f"Serving {label} on ws://{host}:{port}, {sharing}, {guard}, frames up to {max_frame_mb:g} MiB (Ctrl-C stops)"
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
