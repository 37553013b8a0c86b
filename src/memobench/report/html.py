"""The report's ``index.html``: one file with inline CSS, the tables and the figures.

Figures are embedded as base64 PNG data URIs by default, so the page works when
opened alone (mailed, attached); a report kept beside its ``figures/`` folder (a
committed copy) can link them instead, at a third of the size. Videos are too large to embed: they are linked
relative to the page (``videos/...`` inside the report folder). No script,
no network resource.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memobench.report.runs import Run
from memobench.report.table_formats import Table, to_html

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1400px; color: #222; background: #fff; padding: 0 16px; }
h1 { font-size: 24px; border-bottom: 3px solid #3f51b5; padding-bottom: 6px; }
h2 { font-size: 19px; margin-top: 36px; color: #283593; }
h3 { font-size: 16px; margin-top: 24px; }
table.t { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
table.t caption { text-align: left; font-weight: bold; padding: 4px 0; }
table.t th, table.t td { border: 1px solid #ccc; padding: 3px 7px; }
table.t th { background: #e8eaf6; }
table.t tr.group th { background: #c5cae9; }
table.t td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.t tbody tr:nth-child(even) { background: #f6f6fb; }
p.note, p.meta { font-size: 12px; color: #555; max-width: 1000px; }
.scroll { overflow-x: auto; }
img.fig { max-width: 100%; border: 1px solid #ddd; margin: 6px 0; }
.videos { display: grid; grid-template-columns: 220px 1fr 1fr; gap: 6px 12px; align-items: start;
          font-size: 13px; }
.videos video { width: 100%; max-width: 420px; background: #000; }
.none { color: #999; font-style: italic; }
nav a { margin-right: 12px; }
"""


@dataclass
class TaskSection:
    """What the page shows for one task: its prefix-curve figure and videos per condition."""

    task_id: str
    figure_png: Path | None
    videos: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # (label, success, failure)


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def _text(value: object) -> str:
    """Any value as HTML text (escaped)."""
    return html.escape(str(value))


def _figure(src: str, alt: str) -> str:
    return f'<img class="fig" src="{html.escape(src)}" alt="{html.escape(alt)}">'


def _video_cell(src: str | None, outcome: str) -> str:
    if src is None:
        return f'<div class="none">no {outcome} video recorded</div>'
    return (
        f'<div><video controls preload="metadata" src="{html.escape(src)}"></video>'
        f'<br><a href="{html.escape(src)}">{html.escape(Path(src).name)}</a></div>'
    )


def render_page(
    runs: Sequence[Run],
    tables: Sequence[Table],
    figures: dict[str, Path],
    tasks: Sequence[TaskSection],
    generated_by: str,
    figure_src: Callable[[Path], str] = data_uri,
) -> str:
    """The whole page. ``figures`` maps a title to a PNG path (shown in that order); ``figure_src``
    gives an ``<img>`` its source from the PNG's path (default: embedded as a data URI)."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>MEMOBench report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>MEMOBench report</h1>",
        '<nav><a href="#runs">runs</a><a href="#tables">tables</a><a href="#figures">figures</a>'
        '<a href="#tasks">tasks</a></nav>',
    ]
    parts += [
        '<h2 id="runs">Runs</h2>',
        _runs_table(runs),
        f'<p class="meta">{html.escape(generated_by)}. Every number is computed from the runs\' '
        "ledger.jsonl files.</p>",
    ]
    parts.append('<h2 id="tables">Tables</h2>')
    for table in tables:
        parts.append(f'<div class="scroll">{to_html(table)}</div>')
    parts.append('<h2 id="figures">Figures</h2>')
    for title, png in figures.items():
        parts += [f"<h3>{html.escape(title)}</h3>", _figure(figure_src(png), title)]
    parts.append('<h2 id="tasks">Per task</h2>')
    for section in tasks:
        parts.append(f'<h3 id="task-{html.escape(section.task_id)}">{html.escape(section.task_id)}</h3>')
        if section.figure_png is not None:
            parts.append(_figure(figure_src(section.figure_png), f"{section.task_id} prefix completion"))
        if section.videos:
            rows = ['<div class="videos"><b>condition</b><b>success</b><b>failure</b>']
            for label, success, failure in section.videos:
                rows += [
                    f"<div>{html.escape(label)}</div>",
                    _video_cell(success, "success"),
                    _video_cell(failure, "failure"),
                ]
            rows.append("</div>")
            parts.append("\n".join(rows))
        else:
            parts.append('<p class="none">No videos recorded for this task (run with --video failures|all).</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _runs_table(runs: Sequence[Run]) -> str:
    rows = [
        '<table class="t"><thead><tr><th>condition</th><th>episodes</th><th>tasks</th>'
        "<th>seed base</th><th>horizon</th><th>folders</th></tr></thead><tbody>"
    ]
    for run in runs:
        # run.json is untrusted input: every value goes through html.escape, whatever its type
        protocol = run.manifests[0].get("protocol", {}) if run.manifests else {}
        if not isinstance(protocol, dict):
            protocol = {}
        horizon = protocol.get("horizon") or "task default"
        folders = "<br>".join(_text(f) for f in run.folders)
        rows.append(
            f'<tr><td>{_text(run.condition.label)}</td><td class="num">{_text(len(run.records))}</td>'
            f'<td class="num">{_text(len(run.task_ids))}</td><td class="num">{_text(protocol.get("seed", "?"))}</td>'
            f"<td>{_text(horizon)}</td><td>{folders}</td></tr>"
        )
    rows.append("</tbody></table>")
    return "\n".join(rows)
