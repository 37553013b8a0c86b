"""The whole report folder from synthetic runs, and the CLI commands that need no simulator."""

from __future__ import annotations

import json
import re

import numpy as np
from PIL import Image
from typer.testing import CliRunner

from memobench.cli import app
from memobench.report.build import build_report


def test_report_folder_has_every_artefact(built_report):
    out = built_report
    for name in ("main", "main_wilson", "oracle", "per_task", "failures"):
        for suffix in (".md", ".csv", ".tex"):
            assert (out / "tables" / f"{name}{suffix}").stat().st_size > 0
    for stem in ("heatmap", "failure_taxonomy", "sr_vs_replan", "prefix/T01-x", "prefix/S01-x", "prefix/O01-x"):
        png = out / "figures" / f"{stem}.png"
        assert (out / "figures" / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
        pixels = np.asarray(Image.open(png).convert("RGB"))
        assert pixels.shape[0] > 150 and pixels.shape[1] > 300 and len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20
    page = (out / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 6  # 3 main figures + 3 tasks
    assert "Main results" in page and "Oracle memory: gap closed" in page and "http" not in page
    # one success and one failure video (agent view, first by name), copied next to the page
    assert 'src="videos/expert-r5/T01-x/T01-x_success_ep000_seed7.mp4"' in page
    assert 'src="videos/expert-r5/T01-x/T01-x_failure_ep001_seed8.mp4"' in page
    assert (out / "videos/expert-r5/T01-x/T01-x_failure_ep001_seed8.mp4").exists()
    assert (
        not list(out.rglob("*_wrist.mp4"))
        and not (out / "videos/expert-r5/T01-x/T01-x_failure_ep002_seed9.mp4").exists()
    )
    runs = json.loads((out / "runs.json").read_text())
    assert [r["condition"] for r in runs] == ["expert k=5", "expert k=5 oracle=fine", "noop k=5"]
    # synthetic records clip nothing (and older ledgers read as none clipped)
    assert runs[0]["clipped_actions"] == {"actions": 0, "episodes": 0, "max_excess": 0.0}
    assert (out / "tables.md").read_text().count("### ") == 5


def test_report_is_reproducible(run_folders, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    build_report([run_folders["expert"]], first)
    build_report([run_folders["expert"]], second)
    for path in first.rglob("*"):
        if path.is_file() and path.name != "runs.json":
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path


def flat(output: str) -> str:
    """Console output with rich's line wrapping undone."""
    return " ".join(output.split())


def test_cli_report_compare_and_kappa(run_folders, tmp_path):
    runner = CliRunner()
    out = tmp_path / "rep"
    result = runner.invoke(app, ["report", str(run_folders["expert"]), str(run_folders["noop"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Report of 2 condition(s), 13 episodes" in flat(result.output) and (out / "index.html").exists()
    assert "expert k=5: partial, 7 of 12 planned episodes" in flat(result.output)  # uneven: T01-x has 4
    bad = runner.invoke(app, ["report", str(tmp_path), "--out", str(out)])
    assert bad.exit_code == 2 and "no run.json" in flat(bad.output)

    result = runner.invoke(
        app,
        [
            "compare",
            str(run_folders["noop"]),
            str(run_folders["expert"]),
            "--out",
            str(tmp_path / "cmp"),
            "--samples",
            "500",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "cmp" / "compare.json").read_text())["comparisons"]
    assert {(r["task"], r["metric"]) for r in rows} >= {("T01-x", "SR"), ("all", "CSR")}

    sheets = []
    for i, labels in enumerate((["storage", "update"], ["storage", "update"], ["storage", "compression"])):
        path = tmp_path / f"sheet{i}.csv"
        path.write_text("item,label\n" + "".join(f"c{j},{label}\n" for j, label in enumerate(labels)))
        sheets.append(str(path))
    (tmp_path / "key.csv").write_text("item,op\nc0,storage\nc1,update\n")
    result = runner.invoke(app, ["kappa", *sheets, "--out", str(tmp_path / "k")])
    assert result.exit_code == 0, result.output
    assert "Fleiss' kappa" in result.output and "2 of 2 items with a majority agree" in flat(result.output)
    assert json.loads((tmp_path / "k" / "kappa.json").read_text())["annotators"] == 3

    result = runner.invoke(app, ["annotations", "export", "--tasks", "T03", "--out", str(tmp_path / "ann")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ann" / "sheet.csv").exists()


def test_taxonomy_panel_titles_that_would_overrun_their_panel_are_cut_at_a_hyphen():
    from memobench.report.figures import PANEL_TITLE_CHARS, _panel_title

    assert _panel_title("T01-check-top-drawer") == "T01-check-top-drawer"
    long = "S10-one-drawer-retrieve-red-cream-cheese-and-pudding"
    assert _panel_title(long) == "S10-one-drawer-retrieve-red-cream-cheese…"
    assert len(_panel_title(long)) <= PANEL_TITLE_CHARS


def test_linked_figures_point_into_the_report_folder(tmp_path, built_report):
    runs = sorted(p for p in (built_report.parent / "runs").iterdir())
    out = tmp_path / "linked"
    build_report(runs, out, videos=False, link_figures=True)
    page = (out / "index.html").read_text()
    sources = re.findall(r'<img class="fig" src="([^"]+)"', page)
    assert "data:image" not in page and len(sources) == 6
    assert "figures/heatmap.png" in sources and all((out / src).is_file() for src in sources)
    assert (out / "index.html").stat().st_size < (built_report / "index.html").stat().st_size / 3
