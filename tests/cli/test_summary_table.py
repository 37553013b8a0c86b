"""The results table ``memobench eval`` prints: percentages, dashes where undefined, group rows."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from tests.metrics.test_export import RECORDS

from memobench.cli.summary_table import summary_table
from memobench.metrics.export import write_summary


def test_summary_table_shows_percentages_and_dashes(tmp_path: Path) -> None:
    table = summary_table(write_summary(RECORDS, tmp_path))
    console = Console(record=True, width=200)
    console.print(table)
    text = console.export_text()
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if "│" in line}
    assert {"a_spatial", "b_temporal", "macro"} <= set(lines)
    assert "temporal (1 task)" in lines and "spatial (1 task)" in lines
    cells = [c.strip() for c in lines["b_temporal"].split("│")[4:10]]
    assert cells == ["0.0", "-", "25.0", "-", "25.0", "0.0"]  # SR MSR MUR MCR CSR TSR
    a_cells = [c.strip() for c in lines["a_spatial"].split("│")[4:10]]
    assert a_cells == ["50.0", "100.0", "100.0", "50.0", "83.3", "50.0"]
