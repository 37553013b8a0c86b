"""``memobench certify``: argument errors are reported before any episode runs.

(The verdict logic is tested in tests/evaluation/test_certify.py; a full
certification is a long run reported in issue notes, not a test.)
"""

from __future__ import annotations

from typer.testing import CliRunner

from memobench.cli import app

runner = CliRunner(env={"COLUMNS": "250"})


def test_unknown_task_fails_fast_with_a_suggestion(tmp_path):
    result = runner.invoke(app, ["certify", "--tasks", "O01-cued-mlk", "--out-root", str(tmp_path / "c")])
    assert result.exit_code == 2
    assert "O01-cued-milk" in result.output
    assert not (tmp_path / "c").exists()


def test_help_states_the_rule():
    result = runner.invoke(app, ["certify", "--help"])
    assert result.exit_code == 0
    assert "95%" in result.output and "chance + 10 points" in result.output
    assert "--memoryless-episodes" in result.output
