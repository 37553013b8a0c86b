"""The command modules stay thin: parse, call one library function, print."""

from __future__ import annotations

import ast
from pathlib import Path

import memobench.cli

MAX_LINES = 40


def test_every_cli_function_is_at_most_40_lines() -> None:
    too_long = []
    for path in sorted(Path(memobench.cli.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
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
