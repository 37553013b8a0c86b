"""The report tables against hand-computed values (see conftest.py for the ledgers).

z = 1.959963984540054, z^2 = 3.841458820694124. Wilson bounds used below:
0 of 4 -> [0, z^2/(4+z^2)] = [0, 0.48989]; 4 of 4 -> [4/(4+z^2), 1] = [0.51011, 1];
2 of 2 -> [2/(2+z^2), 1] = [0.34238, 1]; 2 of 4 -> 0.5 -/+ 0.34996 = [0.15004, 0.84996].
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from tests.report.synthetic_runs import write_run

from memobench.report.result_tables import chance_level, failure_table, main_table, task_table, wilson_table
from memobench.report.runs import Condition, ReportError, load_runs
from memobench.report.table_formats import to_csv, to_latex, to_markdown


@pytest.fixture
def runs(run_folders):
    return load_runs([run_folders["noop"], run_folders["expert"]])


def csv_rows(table) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(to_csv(table))))


def test_runs_are_grouped_and_sorted_by_condition(run_folders):
    runs = load_runs(run_folders.values())
    assert [r.condition for r in runs] == [
        Condition("expert", 5, None),
        Condition("expert", 5, "fine"),
        Condition("noop", 5, None),
    ]
    assert [r.condition.label for r in runs] == ["expert k=5", "expert k=5 oracle=fine", "noop k=5"]


def test_a_run_whose_chunks_were_short_is_labelled_by_the_interval_it_kept(tmp_path, records):
    """A policy returning 3-row chunks at --replan-steps 5 was re-queried every 3 steps."""
    short = [r.model_copy(update={"min_chunk_rows": 3, "short_chunk_queries": 1}) for r in records["noop"]]
    (run,) = load_runs([write_run(tmp_path / "short", short, "noop", 5)])
    assert run.condition == Condition("noop", 5, None, effective_replan_steps=3)
    assert run.condition.label == "noop k=5 (effective 3)" and run.condition.slug == "noop-r5-e3"
    row = csv_rows(main_table([run]))[0]
    assert row["replan_steps"] == "5" and row["effective_replan_steps"] == "3"
    assert "| noop | 5 (effective 3) |" in to_markdown(main_table([run]))
    full = [r.model_copy(update={"min_chunk_rows": 50}) for r in records["noop"]]  # chunks at least k long: k kept
    (run,) = load_runs([write_run(tmp_path / "full", full, "noop", 5)])
    assert run.condition.effective_replan_steps is None and run.condition.label == "noop k=5"


def test_main_table_values_and_macro_skips_undefined_cells(runs):
    expert, noop = csv_rows(main_table(runs))
    assert (
        expert["policy"] == "expert"
        and expert["replan_steps"] == "5"
        and expert["episodes"] == "7"
        and expert["tasks"] == "3"
    )
    assert float(expert["temporal_SR"]) == pytest.approx(2 / 4)
    assert float(expert["temporal_MSR"]) == pytest.approx(3 / 4)
    assert float(expert["temporal_MUR"]) == pytest.approx(2 / 4)
    assert expert["temporal_MCR"] == ""  # no compression checkpoint in a temporal task: undefined
    assert float(expert["spatial_MCR"]) == 1.0 and expert["spatial_MUR"] == ""
    assert float(expert["object_MUR"]) == pytest.approx(1 / 2)  # required U done, optional u missed
    # macro = mean over the types where defined
    assert float(expert["macro_SR"]) == pytest.approx((0.5 + 1 + 1) / 3)
    assert float(expert["macro_MSR"]) == pytest.approx((0.75 + 1 + 1) / 3)
    assert float(expert["macro_MUR"]) == pytest.approx((0.5 + 0.5) / 2)  # spatial has no update
    assert float(expert["macro_MCR"]) == pytest.approx(1.0)  # only spatial defines MCR
    # noop has no object task: its object cells are undefined, its macro covers 2 types
    assert (
        noop["tasks"] == "2"
        and noop["object_SR"] == ""
        and float(noop["macro_SR"]) == 0.0
        and noop["macro_MCR"] == "0.0"
    )
    md = to_markdown(main_table(runs))
    assert "| expert | 5 | 7 (5 missing) | 3 | 50.0 | 75.0 | 50.0 | \u2013 | 100.0 |" in md
    assert "| 83.3 | 91.7 | 50.0 | 100.0 |" in md


def test_a_run_short_of_its_planned_episodes_is_marked_partial(tmp_path):
    from tests.report.synthetic_runs import record

    # run.json plans 2 tasks x 3 episodes; the ledger holds 3 + 1 of them
    partial = [record("T01-x", e, "S", 1) for e in range(3)] + [record("S01-x", 0, "S", 1)]
    (run,) = load_runs([write_run(tmp_path / "partial", partial, "p", 5)])
    assert (run.planned_episodes, run.missing_episodes, run.episodes_label) == (6, 2, "4 (2 missing)")
    assert "p k=5: partial, 4 of 6 planned episodes" in run.partial_warning
    row = csv_rows(main_table([run]))[0]
    assert (row["episodes"], row["missing_episodes"]) == ("4", "2")
    complete = partial + [record("S01-x", e, "S", 1) for e in (1, 2)]
    (run,) = load_runs([write_run(tmp_path / "complete", complete, "p", 5)])
    assert (run.missing_episodes, run.episodes_label, run.partial_warning) == (0, "6", None)
    # a run.json that does not say what it plans (hand-written, or damaged): not called partial
    manifest = json.loads((tmp_path / "partial" / "run.json").read_text())
    for broken in ({"num_trials_per_task": "3"}, {"num_trials_per_task": None}, {"num_trials_per_task": True}):
        (tmp_path / "partial" / "run.json").write_text(json.dumps({**manifest, **broken}))
        (run,) = load_runs([tmp_path / "partial"])
        assert (run.planned_episodes, run.missing_episodes, run.partial_warning) == (None, 0, None)


def test_wilson_table_edges_and_middle(runs):
    table = wilson_table(runs)
    expert, noop = csv_rows(table)
    assert (expert["spatial_SR_k"], expert["spatial_SR_n"]) == ("2", "2")
    assert float(expert["spatial_SR_lo"]) == pytest.approx(0.342380, abs=1e-6)
    assert float(expert["spatial_SR_hi"]) == 1.0
    assert float(expert["temporal_SR_lo"]) == pytest.approx(0.150039, abs=1e-6)
    assert float(expert["temporal_SR_hi"]) == pytest.approx(0.849961, abs=1e-6)
    assert float(noop["temporal_SR_lo"]) == 0.0
    assert float(noop["temporal_SR_hi"]) == pytest.approx(0.489890, abs=1e-6)
    assert noop["object_SR_lo"] == "" and noop["object_SR_n"] == "0"
    display = dict(zip(table.flat_header(), table.rows[0], strict=True))
    assert display["spatial SR"] == "34.2\u2013100.0" and display["temporal SR"] == "15.0\u201385.0"
    assert display["temporal MCR"] == "\u2013"
    assert "macro SR" not in display  # a mean of proportions has no Wilson interval


def test_task_table_robomemarena_columns(runs):
    rows = {(r["task_id"], r["policy"]): r for r in csv_rows(task_table(runs))}
    t01 = rows[("T01-x", "expert")]
    assert float(t01["CSR"]) == pytest.approx(5 / 8)  # per-episode scores (1 + 1/2 + 0 + 1) / 4
    assert float(t01["TSR"]) == float(t01["stage_success_rate"]) == pytest.approx(0.5)
    assert float(t01["goal_success_rate_pct"]) == pytest.approx(62.5)
    assert float(t01["average_score_pct"]) == pytest.approx(62.5)
    o01 = rows[("O01-x", "expert")]
    assert float(o01["CSR"]) == 1.0 and float(o01["average_score_pct"]) == pytest.approx(200 / 3)
    assert [r["task_id"] for r in csv_rows(task_table(runs))] == ["T01-x", "T01-x", "S01-x", "S01-x", "O01-x"]


def test_task_table_shows_each_task_chance_level(runs):
    # The synthetic ids are not in the suite: no chance level, rather than a made-up one.
    assert {r["chance"] for r in csv_rows(task_table(runs))} == {""}
    assert chance_level("T01-x") is None
    # Real tasks: the level their task file declares (arena tasks: 1, no memory needed to succeed).
    assert chance_level("S01-hide-and-retrieve-butter") == pytest.approx(1 / 3, abs=1e-3)
    assert chance_level("P04-stack-in-order") == pytest.approx(1 / 6)
    assert chance_level("A06-pour-tomato-sauce-into-bowl-drainer") == 1.0


def test_failure_table_counts(runs):
    rows = {(r["task_id"], r["policy"]): r for r in csv_rows(failure_table(runs))}
    t01 = rows[("T01-x", "expert")]
    assert (t01["successes"], t01["stale_update"], t01["storage_failure"]) == ("2", "1", "1")
    assert rows[("S01-x", "noop")]["storage_failure"] == "2"


def test_failure_table_and_figure_list_every_class(tmp_path):
    from tests.report.synthetic_runs import record, write_run

    from memobench.core.records import FailureClass
    from memobench.report import figures

    # P01-y (S, C): ep0 storage done, compression missed; ep1 all done but an extra pour; ep2 success.
    # T02-y (S, C, U): ep0 S and C done, U missed (the first update: stale_update).
    folder = write_run(
        tmp_path / "run",
        [
            record("P01-y", 0, "SC", 1),
            record("P01-y", 1, "SC", 2, end_reason="extra_pour"),
            record("P01-y", 2, "SC", 2),
            record("T02-y", 0, "SCU", 2),
        ],
        "expert",
        5,
    )
    runs = load_runs([folder])
    table = failure_table(runs)
    classes = [fc.value for fc in FailureClass]
    assert table.csv_header[-len(classes) :] == classes and "compression_failure" in table.header
    rows = {r["task_id"]: r for r in csv_rows(table)}
    p01 = rows["P01-y"]
    assert (p01["successes"], p01["compression_failure"], p01["over_execution"]) == ("1", "1", "1")
    assert rows["T02-y"]["stale_update"] == "1" and rows["T02-y"]["late_stale"] == "0"
    assert "compression_failure" in table.notes
    assert set(figures.OUTCOME_COLOURS) == {"success", *classes}
    png, pdf = figures.failure_bars(runs, tmp_path / "fig" / "failures")
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0


def test_violation_table_counts_each_broken_commitment(tmp_path):
    from tests.report.synthetic_runs import record, write_run

    from memobench.report.result_tables import violation_table

    # T09-y: two extra pours (at steps 79 and 59), one violation (step 99), one success.
    folder = write_run(
        tmp_path / "run",
        [
            record("T09-y", 0, "SUC", 2, end_reason="extra_pour", steps=80),
            record("T09-y", 1, "SUC", 3, end_reason="extra_pour", steps=60),
            record("T09-y", 2, "SUC", 1, end_reason="violation"),
            record("T09-y", 3, "SUC", 3),
        ],
        "expert",
        5,
    )
    table = violation_table(load_runs([folder]))
    rows = {r["violation"]: r for r in csv_rows(table)}
    assert set(rows) == {"extra_pour", "violation"}
    assert (rows["extra_pour"]["episodes"], rows["extra_pour"]["first_step"], rows["extra_pour"]["last_step"]) == (
        "2",
        "59",
        "79",
    )
    assert rows["violation"]["episodes"] == "1"
    clean = write_run(tmp_path / "clean", [record("T09-y", 0, "SUC", 3)], "expert", 5)
    assert violation_table(load_runs([clean])) is None


def test_binding_table_shows_where_successes_fall(tmp_path):
    from tests.report.synthetic_runs import record, write_run

    from memobench.report.result_tables import binding_table

    # S01-x: a fixed-preference policy, top drawer 3 of 4 episodes (3 successes), middle 1 (0);
    # T01-x has no binding and gets no row.
    drawers = ["top", "top", "middle", "top"]
    folder = write_run(
        tmp_path / "run",
        [record("S01-x", i, "SU", 2 if d == "top" else 1, binding={"drawer": d}) for i, d in enumerate(drawers)]
        + [record("T01-x", 0, "SU", 2)],
        "bc-mlp",
        5,
    )
    table = binding_table(load_runs([folder]))
    rows = {r["binding"]: r for r in csv_rows(table)}
    assert set(rows) == {"drawer=middle", "drawer=top"}

    def cells(row):
        return row["episodes"], float(row["share"]), row["successes"], float(row["SR"])

    assert cells(rows["drawer=top"]) == ("3", 0.75, "3", 1.0)
    assert cells(rows["drawer=middle"]) == ("1", 0.25, "0", 0.0)
    assert {r["task_id"] for r in csv_rows(table)} == {"S01-x"}
    assert "| S01-x | spatial | bc-mlp | 5 | drawer=top | 3 | 75.0 | 3 | 100.0 |" in to_markdown(table)
    unbound = write_run(tmp_path / "unbound", [record("T01-x", 0, "SU", 2)], "bc-mlp", 5)
    assert binding_table(load_runs([unbound])) is None


def test_latex_is_booktabs_with_groups_and_escapes(runs):
    tex = to_latex(main_table(runs))
    assert tex.count("\\begin{tabular}") == 1 and "\\toprule" in tex and "\\bottomrule" in tex
    assert "\\multicolumn{4}{c}{temporal}" in tex and "\\cmidrule(lr){5-8}" in tex
    assert "expert & 5 & 7 (5 missing) & 3 & 50.0 & 75.0 & 50.0 & -- &" in tex


def test_merging_folders_of_one_condition_and_clashes(tmp_path, records):
    from tests.report.synthetic_runs import write_run

    a = write_run(tmp_path / "a", records["expert"][:4], "expert", 5)
    b = write_run(tmp_path / "b", records["expert"][4:], "expert", 5)
    (run,) = load_runs([a, b])
    assert len(run.records) == 7 and run.folders == [a, b]
    with pytest.raises(ReportError, match="both hold task 'T01-x' episode 0"):
        load_runs([a, a])
    c = write_run(tmp_path / "c", records["expert"][4:], "expert", 5, seed=100)
    with pytest.raises(ReportError, match="differ in protocol field 'seed' \\(7 vs 100\\)"):
        load_runs([a, c])
    # a run.json from before a protocol field existed means that field's default
    old = json.loads((b / "run.json").read_text())
    del old["protocol"]["adapter_timeout"]
    (b / "run.json").write_text(json.dumps(old))
    assert len(load_runs([a, b])[0].records) == 7
    # ... except a field whose default changed meaning: before clip_actions, runs refused out-of-range actions
    del old["protocol"]["clip_actions"]
    (b / "run.json").write_text(json.dumps(old))
    with pytest.raises(ReportError, match="differ in protocol field 'clip_actions' \\(True vs False\\)"):
        load_runs([a, b])
    with pytest.raises(ReportError, match="no run.json"):
        load_runs([tmp_path])
    with pytest.raises(ReportError, match="hold no episode yet"):
        load_runs([write_run(tmp_path / "empty", [], "expert", 5)])
    with pytest.raises(ReportError, match="not a folder"):
        load_runs([tmp_path / "missing"])


def test_trained_models_are_conditions_of_their_own(tmp_path, records):
    """Two `--policy checkpoint` runs on the same seeds are two rows, named by their training folders."""
    from tests.report.synthetic_runs import write_run

    mlp, gru = (
        write_run(tmp_path / name, records["expert"], "checkpoint", 5, adapter_kwargs={"path": f"train/{name}"})
        for name in ("mlp", "gru")
    )
    assert [run.condition.label for run in load_runs([mlp, gru])] == ["checkpoint-gru k=5", "checkpoint-mlp k=5"]
