"""The command modules stay thin: parse, call one library function, print."""

from __future__ import annotations

import ast
from pathlib import Path

import memobench.cli

MAX_LINES = 40


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end: what the function does.

    The signature is not counted: a command's signature is its flag declarations, which
    ``ruff format`` lays out one per line (``serve`` declares 8 flags in 34 lines)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def test_every_cli_function_is_at_most_40_lines() -> None:
    too_long = []
    for path in sorted(Path(memobench.cli.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = body_lines(node)
                if lines > MAX_LINES:
                    too_long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert not too_long, "move the orchestration into the library: " + ", ".join(too_long)


def test_command_modules_share_helpers_only_through_common() -> None:
    """No command module imports another's private names (the shared ones live in cli/common.py)."""
    for path in sorted(Path(memobench.cli.__file__).parent.glob("*_cmd.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memobench.cli."):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"
