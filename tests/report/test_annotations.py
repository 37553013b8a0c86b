"""Blind relabelling sheets and Fleiss' kappa over annotators' sheets."""

from __future__ import annotations

import csv

import pytest

from memobench.core.suite import Suite
from memobench.report.annotations import (
    CATEGORIES,
    SheetError,
    agreement,
    agreement_markdown,
    export_sheet,
    read_key,
    read_sheet,
)

# Fleiss (1971) as worked on Wikipedia ("Fleiss' kappa"): 10 items, 14 raters, 5 categories;
# P-bar = 0.378, P-bar-e = 0.213, kappa = 0.210.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def sheets_from_counts(table: list[list[int]], categories: list[str]) -> list[dict[str, str]]:
    """One {item: label} per rater such that item i gets table[i][j] labels j."""
    raters = sum(table[0])
    sheets: list[dict[str, str]] = [{} for _ in range(raters)]
    for i, row in enumerate(table):
        labels = [categories[j] for j, n in enumerate(row) for _ in range(n)]
        for r in range(raters):
            sheets[r][f"item{i}"] = labels[r]
    return sheets


def test_kappa_over_sheets_reproduces_the_published_example():
    cats = ["1", "2", "3", "4", "5"]
    result = agreement(sheets_from_counts(WIKIPEDIA_TABLE, cats), categories=cats)
    assert result.annotators == 14 and len(result.items) == 10
    assert result.kappa == pytest.approx(0.210, abs=5e-4)
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.chance == pytest.approx(0.213, abs=5e-4)
    assert [result.category_share[c] for c in cats] == pytest.approx([0.143, 0.200, 0.279, 0.150, 0.229], abs=5e-4)
    assert result.consensus["item0"] == "5" and result.consensus["item5"] is None  # 7 vs 7: a tie


def test_consensus_against_the_key_hand_computed():
    # three annotators, four items; key: s u c s
    a = {"i1": "storage", "i2": "update", "i3": "compression", "i4": "storage"}
    b = {"i1": "storage", "i2": "update", "i3": "update", "i4": "update"}
    c = {"i1": "storage", "i2": "compression", "i3": "compression", "i4": "compression"}
    key = {"i1": "storage", "i2": "update", "i3": "compression", "i4": "storage"}
    result = agreement([a, b, c], key=key)
    # per-item agreement P_i = (sum n_ij^2 - 3) / 6: i1 1, i2 1/3, i3 1/3, i4 0 -> P-bar 5/12
    assert result.observed == pytest.approx(5 / 12)
    # shares: storage 4/12, update 4/12, compression 4/12 -> P-bar-e 1/3; kappa (5/12-1/3)/(2/3) = 1/8
    assert result.chance == pytest.approx(1 / 3) and result.kappa == pytest.approx(1 / 8)
    assert result.consensus == {"i1": "storage", "i2": "update", "i3": "compression", "i4": None}
    ref = result.reference
    assert (ref["items_with_majority"], ref["agree_with_suite"], ref["ties"]) == (3, 3, 1)
    assert ref["accuracy"] == 1.0 and ref["confusion"]["storage"] == {"storage": 1, "tie": 1}
    assert "Fleiss' kappa: **0.125**" in agreement_markdown(result)


def test_export_is_blind_shuffled_and_keyed(tmp_path):
    tasks = Suite.load().select("pilot")
    sheet, key = export_sheet(tasks, tmp_path, seed=3)
    with sheet.open() as f:
        rows = list(csv.DictReader(f))
    answers = read_key(key)
    n = sum(len(t.spec.checkpoints) for t in tasks)
    assert len(rows) == len(answers) == n
    assert "op" not in rows[0] and all(r["label"] == "" for r in rows)
    assert not any(t.id in sheet.read_text() for t in tasks)  # no task id leaks into the sheet
    truth = {(t.id, i): cp.op.value for t in tasks for i, cp in enumerate(t.spec.checkpoints)}
    with key.open() as f:
        for row in csv.DictReader(f):
            assert truth[(row["task_id"], int(row["checkpoint_index"]))] == row["op"]
    first_task = [r["instruction"] for r in rows[:3]]
    assert len(set(first_task)) > 1 or n < 4  # shuffled across tasks
    again, _ = export_sheet(tasks, tmp_path / "again", seed=3)
    assert again.read_text() == sheet.read_text()  # reproducible from the seed
    assert (tmp_path / "INSTRUCTIONS.md").exists()


def test_sheet_errors_name_file_row_and_item(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item,label\nc001,storage\nc002,memory\n")
    with pytest.raises(SheetError, match=r"s.csv:3: item c002 has label 'memory'; use one of storage"):
        read_sheet(path)
    path.write_text("item,label\nc001,\n")
    with pytest.raises(SheetError, match="item c001 has no label"):
        read_sheet(path)
    path.write_text("item,label\nc001, Storage \n")
    assert read_sheet(path) == {"c001": "storage"} and CATEGORIES == ("storage", "update", "compression")
    with pytest.raises(SheetError, match="does not label the same items"):
        agreement([{"a": "storage"}, {"b": "storage"}], names=["x.csv", "y.csv"])
    with pytest.raises(SheetError, match="at least two"):
        agreement([{"a": "storage"}])
