"""The sweep plan, and one tiny real sweep (noop, one task, one short episode per interval)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.report.sweep import ORACLE_LEVELS, SweepPoint, parse_replan_steps, plan_sweep


def test_plan_covers_intervals_then_oracle_levels(tmp_path):
    points = plan_sweep(tmp_path, "pi0", oracle_levels=ORACLE_LEVELS)
    assert len(points) == 16
    assert points[:4] == [
        SweepPoint(5, None, tmp_path / "pi0-r5"),
        SweepPoint(5, "coarse", tmp_path / "pi0-r5-oracle-coarse"),
        SweepPoint(5, "intermediate", tmp_path / "pi0-r5-oracle-intermediate"),
        SweepPoint(5, "fine", tmp_path / "pi0-r5-oracle-fine"),
    ]
    assert [p.replan_steps for p in plan_sweep(tmp_path, "x")] == [5, 20, 35, 50]
    assert len({p.out_root for p in points}) == 16  # no two runs share a folder
    with pytest.raises(ValueError, match="unknown oracle level 'perfect'"):
        plan_sweep(tmp_path, "x", oracle_levels=["perfect"])


def test_parse_replan_steps():
    assert parse_replan_steps("50, 5,20,5") == [5, 20, 50]
    with pytest.raises(ValueError, match="'x' is not a positive integer"):
        parse_replan_steps("5,x")
    with pytest.raises(ValueError, match="empty"):
        parse_replan_steps(" , ")


@pytest.mark.sim
def test_sweep_runs_resumes_and_reports(tmp_path: Path):
    runner = CliRunner()
    args = [
        "sweep",
        "--policy",
        "noop",
        "--tasks",
        "T03",
        "--num-trials-per-task",
        "1",
        "--horizon",
        "20",
        "--replan-steps",
        "5,50",
        "--out-root",
        str(tmp_path),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    for k in (5, 50):
        run = json.loads((tmp_path / f"noop-r{k}" / "run.json").read_text())
        assert run["protocol"]["replan_steps"] == k and run["protocol"]["horizon"] == 20
        assert len((tmp_path / f"noop-r{k}" / "ledger.jsonl").read_text().splitlines()) == 1
    rows = (tmp_path / "report" / "tables" / "main.csv").read_text().splitlines()
    # policy, replan_steps, effective_replan_steps, episodes
    assert [r.split(",")[:4] for r in rows[1:]] == [["noop", "5", "5", "1"], ["noop", "50", "50", "1"]]
    # a second invocation resumes: nothing is run again
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert " ".join(again.output.split()).count("ran 0 episodes, 1 already in the ledger") == 2
    assert len((tmp_path / "noop-r5" / "ledger.jsonl").read_text().splitlines()) == 1
