"""Oracle gap closed and paired comparisons, against hand-computed values (ledgers: conftest.py)."""

from __future__ import annotations

import pytest
from tests.report.synthetic_runs import record

from memobench.report.compare import compare_records, comparison_table
from memobench.report.oracle import gap_closed, oracle_pairs, oracle_rows, oracle_table
from memobench.report.runs import load_runs


def test_gap_closed_formula():
    assert gap_closed(0.5, 0.75) == pytest.approx(0.5)  # (75 - 50) / (100 - 50)
    assert gap_closed(0.2, 0.2) == 0.0
    assert gap_closed(0.6, 0.4) == pytest.approx(-0.5)  # the oracle can hurt
    assert gap_closed(1.0, 1.0) is None and gap_closed(None, 0.3) is None and gap_closed(0.3, None) is None


def test_oracle_pairs_on_shared_seeds_only(run_folders):
    runs = load_runs(run_folders.values())
    (pair,) = oracle_pairs(runs)
    assert pair.standard.label == "expert k=5" and pair.oracle.label == "expert k=5 oracle=fine"
    # O01-x only in the standard run, T01-x ep4 only in the oracle run: both left out
    assert pair.episodes == 6 and {(r.task_id, r.seed) for r in pair.oracle_records} == {
        ("T01-x", 7),
        ("T01-x", 8),
        ("T01-x", 9),
        ("T01-x", 10),
        ("S01-x", 7),
        ("S01-x", 8),
    }
    rows = {row["group"]: row for row in oracle_rows(pair)}
    assert list(rows) == ["temporal", "spatial", "macro"]
    assert rows["temporal"]["episodes"] == 4
    assert rows["temporal"]["SR"] == pytest.approx((0.5, 0.75, 0.5))
    assert rows["temporal"]["MSR"] == pytest.approx((0.75, 1.0, 1.0))
    assert rows["temporal"]["MUR"] == pytest.approx((0.5, 0.75, 0.5))
    assert rows["temporal"]["MCR"] == (None, None, None)
    assert rows["spatial"]["SR"] == (1.0, 1.0, None)  # standard already 100%: nothing to close
    assert rows["macro"]["SR"] == pytest.approx((0.75, 0.875, 0.5))
    assert rows["macro"]["MSR"] == pytest.approx((0.875, 1.0, 1.0))
    assert rows["macro"]["MCR"] == (1.0, 1.0, None)
    table = oracle_table(runs)
    assert table is not None and table.rows[0][:8] == ["expert", "5", "fine", "temporal", "4", "50.0", "75.0", "50.0"]
    assert oracle_table(load_runs([run_folders["expert"], run_folders["noop"]])) is None


def test_macro_gap_closed_is_the_mean_of_the_per_type_gaps(tmp_path):
    from tests.report.synthetic_runs import write_run

    # One-checkpoint tasks (S), so SR = MSR = share of episodes completing the storage checkpoint.
    # temporal T01-z, 4 seeds: standard 0 of 4 done, oracle 2 of 4 -> gap (0.5 - 0) / (1 - 0) = 0.5
    # spatial  S01-z, 4 seeds: standard 2 of 4 done, oracle 4 of 4 -> gap (1 - 0.5) / (1 - 0.5) = 1.0
    # macro gap = (0.5 + 1.0) / 2 = 0.75, whereas the gap between the macro averages,
    # standard (0 + 0.5) / 2 = 0.25 and oracle (0.5 + 1) / 2 = 0.75, would be (0.75 - 0.25) / 0.75 = 2/3.
    standard = [record("T01-z", e, "S", 0) for e in range(4)] + [record("S01-z", e, "S", int(e < 2)) for e in range(4)]
    oracle = [record("T01-z", e, "S", int(e < 2)) for e in range(4)] + [record("S01-z", e, "S", 1) for e in range(4)]
    runs = load_runs(
        [write_run(tmp_path / "std", standard, "p", 5), write_run(tmp_path / "orc", oracle, "p", 5, "fine")]
    )
    (pair,) = oracle_pairs(runs)
    rows = {row["group"]: row for row in oracle_rows(pair)}
    assert rows["temporal"]["SR"] == pytest.approx((0.0, 0.5, 0.5))
    assert rows["spatial"]["SR"] == pytest.approx((0.5, 1.0, 1.0))
    assert rows["macro"]["SR"] == pytest.approx((0.25, 0.75, 0.75))
    assert rows["macro"]["MSR"] == pytest.approx((0.25, 0.75, 0.75))
    assert rows["macro"]["MUR"] == (None, None, None)  # no update checkpoint anywhere
    table = oracle_table(runs)
    assert table is not None and table.rows[-1][3:8] == ["macro", "8", "25.0", "75.0", "75.0"]
    assert "mean of the per-type gaps closed" in table.notes


def test_macro_gap_skips_types_without_a_gap():
    from memobench.report.oracle import mean_gap

    assert mean_gap([0.5, None, 1.0]) == pytest.approx(0.75)  # (0.5 + 1.0) / 2
    assert mean_gap([None, None]) is None and mean_gap([]) is None
    assert mean_gap([-0.5, 0.25]) == pytest.approx(-0.125)  # (-0.5 + 0.25) / 2


def test_compare_per_task_mcnemar_and_bootstrap(records):
    a = records["expert"]
    b = list(reversed(records["noop"])) + [record("T01-x", 7, "SU", 2)]  # order and unpaired extras do not matter
    rows = {(c.task, c.metric): c for c in compare_records(a, b, samples=10_000)}
    sr = rows[("T01-x", "SR")]
    # A solved ep0 and ep3, B none: 2 discordant, both for A: p = 2 * 1/2^2
    assert (sr.n, sr.a, sr.b, sr.difference, sr.test) == (4, 0.5, 0.0, -0.5, "mcnemar")
    assert sr.p_value == pytest.approx(0.5) and not sr.significant and sr.low is None
    csr = rows[("T01-x", "CSR")]
    # per-episode stage scores A [1, .5, 0, 1], B 0: mean difference -0.625; a resample reaches
    # the null's side (mean >= 0) only when it draws ep2 four times: p ~ 1/4^4 = 0.0039
    assert csr.test == "bootstrap" and csr.difference == pytest.approx(-0.625)
    assert -1.0 <= csr.low < csr.difference < csr.high <= 0.0
    assert csr.p_value < 0.01 and csr.significant
    assert rows[("T01-x", "MSR")].difference == pytest.approx(-0.75)
    assert rows[("T01-x", "MUR")].difference == pytest.approx(-0.5)
    assert ("T01-x", "MCR") not in rows and rows[("S01-x", "MCR")].n == 2
    assert ("O01-x", "SR") not in rows  # B never ran O01-x
    everything = rows[("all", "SR")]
    assert everything.n == 6 and everything.p_value == pytest.approx(2 / 16)  # 4 discordant, all for A


def test_compare_per_memory_type_pools_the_types_tasks():
    # temporal: T01-y A solves eps 0-4, B none; T02-y A none, B ep 0 -> 6 discordant, 5 for A:
    # p = 2 * P(X <= 1 | 6, 1/2) = 2 * 7/64. spatial: S01-y both solve ep 0 only -> no discordant pair.
    a = [record("T01-y", e, "S", int(e < 5)) for e in range(6)] + [record("T02-y", e, "S", 0) for e in range(6)]
    b = [record("T01-y", e, "S", 0) for e in range(6)] + [record("T02-y", e, "S", int(e == 0)) for e in range(6)]
    a += [record("S01-y", e, "S", int(e == 0)) for e in range(3)]
    b += [record("S01-y", e, "S", int(e == 0)) for e in range(3)]
    rows = {(c.task, c.metric): c for c in compare_records(a, b, samples=500)}
    assert [c.task for c in compare_records(a, b, samples=500) if c.metric == "SR"] == [
        "T01-y",
        "T02-y",
        "S01-y",
        "temporal",
        "spatial",
        "all",
    ]
    temporal = rows[("temporal", "SR")]
    assert (temporal.n, temporal.a, temporal.b) == (12, 5 / 12, 1 / 12)
    assert temporal.p_value == pytest.approx(14 / 64)
    assert rows[("spatial", "SR")].p_value == pytest.approx(1.0) and rows[("spatial", "SR")].n == 3
    assert rows[("all", "SR")].n == 15
    # one memory type: its row would repeat "all", so there is none
    only_temporal = {c.task for c in compare_records(a[:12], b[:12], samples=500)}
    assert only_temporal == {"T01-y", "T02-y", "all"}


def test_comparison_table_flags_significance(records):
    rows = compare_records(records["expert"], records["noop"], samples=2000)
    table = comparison_table(rows, "expert", "noop")
    flagged = {(r[0], r[1]) for r in table.rows if r[-1] == "*"}
    assert ("T01-x", "CSR") in flagged and ("T01-x", "SR") not in flagged
    assert table.rows[0][:6] == ["T01-x", "SR", "4", "50.0", "0.0", "-50.0"]
    # the reader is told what the tests do not cover: another training run of either policy
    assert "Episodes are the unit" in table.notes and "several training seeds" in table.notes
