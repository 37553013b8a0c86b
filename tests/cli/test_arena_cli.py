"""The arena on the command line: RoboMemArena's flag names, its protocol preset, its task range."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from memobench.cli import app
from memobench.cli.options import Flags, config_options
from memobench.evaluation.protocol import ROBOMEMARENA_DEFAULTS, Protocol

RUN_ALL_FLAGS = (
    "--num-trials-per-task", "--seed", "--max-steps", "--post-goal-steps", "--no-fail-on-extra-pour",
    "--post-stage-steps", "--extra-pour-monitor-steps", "--replan-steps", "--resize-size", "--num-steps-wait",
    "--task-start", "--task-end", "--protocol",
)  # fmt: skip


def protocol_of(*args: str) -> dict:
    """The Protocol a command with the generated flags builds from ``args``."""
    probe = typer.Typer()

    @probe.command()
    @config_options(protocol=Flags(Protocol))
    def show(*, protocol: Protocol) -> None:
        typer.echo(protocol.model_dump_json())

    result = CliRunner().invoke(probe, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_eval_accepts_the_run_all_flags_under_their_names() -> None:
    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    for flag in RUN_ALL_FLAGS:
        assert flag in result.stdout, flag


def test_the_named_protocol_fills_the_flags_not_given() -> None:
    arena = protocol_of("--protocol", "robomemarena")
    assert {k: arena[k] for k in ROBOMEMARENA_DEFAULTS} == ROBOMEMARENA_DEFAULTS
    given = protocol_of("--protocol", "robomemarena", "--seed", "50", "--replan-steps", "5", "--max-steps", "600")
    assert (given["seed"], given["replan_steps"], given["horizon"], given["resize_size"]) == (50, 5, 600, 256)
    # A flag given at its MEMOBench default value still wins over the preset.
    assert protocol_of("--protocol", "robomemarena", "--seed", "7")["seed"] == 7
    lenient = protocol_of("--protocol", "robomemarena", "--no-fail-on-extra-pour", "--post-stage-steps", "100")
    assert (lenient["fail_on_extra_pour"], lenient["extra_pour_monitor_steps"]) == (False, 100)
    assert protocol_of()["seed"] == 7 and protocol_of()["resize_mode"] == "pad"


def test_task_range_is_for_arena_tasks_only() -> None:
    mixed = CliRunner().invoke(app, ["eval", "--tasks", "T01,A06", "--task-start", "1"])
    assert mixed.exit_code == 2 and "arena tasks only" in mixed.stderr
    backwards = CliRunner().invoke(app, ["eval", "--tasks", "arena", "--task-start", "9", "--task-end", "3"])
    assert backwards.exit_code == 2 and "after --task-end" in backwards.stderr
