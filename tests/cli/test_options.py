"""Flags generated from the run configuration: one definition each, same names, defaults and bounds."""

from __future__ import annotations

from typer.testing import CliRunner

from memobench.cli import app
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol

runner = CliRunner(env={"COLUMNS": "250"})


def test_eval_sweep_and_certify_offer_the_protocol_flags_with_their_aliases() -> None:
    for command in ("eval", "sweep", "certify"):
        text = runner.invoke(app, [command, "--help"]).output
        for flag in (
            "--seed",
            "--horizon",
            "--stabilization-steps",
            "--adapter-timeout",
            "--post-stage-steps",
            "--fail-on-extra-pour",
            "--clip-actions",
            "--strict-actions",
            "--workers",
            "--backend",
            "--max-attempts",
        ):
            assert flag in text, f"{command} lacks {flag}"
        assert "--camera-size" not in text and "--end-when-finished" not in text


def test_a_bound_from_the_model_is_enforced_by_the_flag(tmp_path) -> None:
    assert Protocol.model_fields["stabilization_steps"].metadata  # ge=0 lives on the model
    result = runner.invoke(app, ["eval", "--stabilization-steps", "-1", "--out-root", str(tmp_path / "o")])
    assert result.exit_code == 2 and "stabilization-steps" in result.output
    assert not (tmp_path / "o").exists()


def test_flags_that_do_not_go_together_fail_in_one_line(tmp_path) -> None:
    result = runner.invoke(app, ["eval", "--ray-address", "x:1", "--out-root", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --ray-address needs --backend ray"
    assert Execution(workers=2, backend="ray").backend == "ray"


def test_actions_are_clipped_by_default_in_both_protocols_and_strict_on_request() -> None:
    from memobench.cli.options import Flags

    assert Protocol().clip_actions and Protocol(name="robomemarena").clip_actions
    flag = next(p for p in Flags(Protocol).parameters() if p.name == "clip_actions")
    assert flag.default is True and "--clip-actions/--strict-actions" in repr(flag.annotation.__metadata__[0].__dict__)
