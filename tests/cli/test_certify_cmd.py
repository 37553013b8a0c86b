"""``memobench certify``: argument errors are reported before any episode runs; the Markdown it writes.

(The verdict logic is tested in tests/report/test_certify.py; a full
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
    assert "95%" in result.output and "90%" in result.output and "chance + 10 points" in result.output
    assert "--memoryless-episodes" in result.output


def test_markdown_is_regenerated_under_the_hand_written_notes(tmp_path, monkeypatch):
    from memobench.metrics.rates import Rate
    from memobench.report import certify

    def fake_run(tasks, counts, protocol, out_root, events=None, execution=None, run=True):
        episodes = counts["expert"]
        rates = {
            "expert": Rate(episodes, episodes),
            "expert-slow": Rate(episodes, episodes),
            "expert-memoryless": Rate(19, 100),
            "expert-reactive": Rate(0, 100),
            **{adversary: Rate(0, 20) for adversary in certify.ADVERSARIES},
        }
        return [certify.Certificate(t.id, "temporal", 1 / 9, rates) for t in tasks]

    monkeypatch.setattr(certify, "run_certification", fake_run)
    doc = tmp_path / "certification.md"
    doc.write_text(f"# old table\n\n{certify.NOTES_MARKER}\n\n## Notes\n\n- by hand\n")
    result = runner.invoke(
        app, ["certify", "--tasks", "T03-check-all-drawers", "--out-root", str(tmp_path / "c"), "--markdown", str(doc)]
    )
    assert result.exit_code == 0, result.output
    text = doc.read_text()
    assert (
        "# old table" not in text
        and "| T03-check-all-drawers | temporal | 20/20 (100%) | 20/20 (100%) | 19/100" in text
    )
    assert text.endswith(f"{certify.NOTES_MARKER}\n\n## Notes\n\n- by hand\n")
    assert "Chance levels to re-check:** T03-check-all-drawers" in text
    assert "expert-memoryless beats chance" in result.output
    assert "the chance level is probably too low" in result.output
    assert certify.NOTES_MARKER not in (tmp_path / "c" / "certification.md").read_text()


def test_arena_page_names_its_suite_and_the_command_that_reproduces_it(tmp_path, monkeypatch):
    from memobench.metrics.rates import Rate
    from memobench.report import certify

    def fake_run(tasks, counts, protocol, out_root, events=None, execution=None, run=True):
        rates = {p: Rate(counts[p], counts[p]) for p in certify.POLICIES}
        return [certify.Certificate(t.id, "sequence", 1.0, rates) for t in tasks]

    monkeypatch.setattr(certify, "run_certification", fake_run)
    args = ["certify", "--tasks", "A01-cookies-tomato-basket", "--protocol", "robomemarena", "--episodes", "3"]
    result = runner.invoke(app, [*args, "--memoryless-episodes", "3", "--out-root", str(tmp_path / "c")])
    assert result.exit_code == 1, result.output  # no task passes: none needs memory
    text = (tmp_path / "c" / "certification.md").read_text()
    assert text.startswith("# Memory-necessity certification of RoboMemArena's tasks (the arena suite)\n")
    # RoboMemArena's defaults come with --protocol; only settings that differ from them are spelled out.
    command = (
        "`memobench certify --tasks A01-cookies-tomato-basket --protocol robomemarena --episodes 3 "
        "--memoryless-episodes 3 --reactive-episodes 30 --seed 100 --replan-steps 10`"
    )
    assert command in text
    assert "3000 steps per episode" in text and "1 need no memory" in text

    result = runner.invoke(
        app, [*args, "--memoryless-episodes", "3", "--max-steps", "2000", "--out-root", str(tmp_path / "d")]
    )
    text = (tmp_path / "d" / "certification.md").read_text()
    assert "--replan-steps 10 --horizon 2000`" in text and "2000 steps per episode" in text
