"""The ``memobench`` command line: one Typer app, one module per command group.

Importing this module must stay cheap (no MuJoCo, LIBERO or torch): commands
import the heavy parts inside their functions.
"""

from __future__ import annotations

import typer

from memobench.cli import certify_cmd, data_cmd, eval_cmd, report_cmd, serve_cmd, tasks_cmd, train_cmd

app = typer.Typer(
    name="memobench",
    help="MEMOBench: measure memory in robot manipulation policies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(tasks_cmd.app, name="tasks")
app.command("eval")(eval_cmd.eval_command)
app.command("certify")(certify_cmd.certify_command)
app.command("collect")(data_cmd.collect_command)
app.add_typer(data_cmd.app, name="data")
app.command("serve")(serve_cmd.serve_command)
app.command("report")(report_cmd.report_command)
app.command("compare")(report_cmd.compare_command)
app.command("sweep")(report_cmd.sweep_command)
app.add_typer(report_cmd.annotations_app, name="annotations")
app.command("kappa")(report_cmd.kappa_command)
app.command("train")(train_cmd.train_command)
app.command("publish")(train_cmd.publish_command)


def main() -> None:  # pragma: no cover - console entry point
    app()
