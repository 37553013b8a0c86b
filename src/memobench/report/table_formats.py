"""A report table and its renderings: Markdown, CSV, LaTeX (booktabs) and an HTML fragment.

A :class:`Table` carries two views of the same numbers: display text (rates as
percentages with one decimal, ``–`` when undefined) for Markdown, LaTeX and
HTML, and raw values for CSV (fractions in [0, 1] except ``*_pct`` columns,
empty cells when undefined), following ``memobench.metrics.export``.
"""

from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import dataclass, field
from typing import Any

DASH = "\u2013"  # en dash: undefined values and ranges in display text


@dataclass
class Table:
    """One table. ``groups`` spans header columns: ``[(label, n_columns), ...]`` summing to
    ``len(header)``; an empty label means no group (Markdown folds groups into the labels)."""

    name: str  # file stem: <name>.md / .csv / .tex
    title: str
    header: list[str]
    rows: list[list[str]]
    csv_header: list[str]
    csv_rows: list[list[Any]]
    groups: list[tuple[str, int]] = field(default_factory=list)
    notes: str = ""

    def __post_init__(self) -> None:
        if self.groups and sum(n for _, n in self.groups) != len(self.header):
            raise ValueError(
                f"table {self.name}: groups span {sum(n for _, n in self.groups)} "
                f"columns, header has {len(self.header)}"
            )
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"table {self.name}: row {row} has {len(row)} cells, header {len(self.header)}")

    def flat_header(self) -> list[str]:
        """Header labels with their group prefixed (``temporal SR``)."""
        if not self.groups:
            return list(self.header)
        out = []
        col = 0
        for label, n in self.groups:
            for sub in self.header[col : col + n]:
                out.append(f"{label} {sub}".strip())
            col += n
        return out


def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage string (``0.625 -> "62.5"``); ``–`` for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{100.0 * value:.{digits}f}"


def interval(low: float | None, high: float | None) -> str:
    """A 95% interval of fractions as ``"41.2–80.1"`` (percent); ``–`` when undefined."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return DASH
    return f"{100.0 * low:.1f}{DASH}{100.0 * high:.1f}"


def csv_cell(value: Any) -> Any:
    """CSV cell: None / NaN -> empty, bool -> true/false, else as is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table with the title as a heading and notes below."""
    header = table.flat_header()
    lines = [f"### {table.title}", "", "| " + " | ".join(header) + " |"]
    aligns = ["---" if _is_text_column(table, i) else "---:" for i in range(len(header))]
    lines.append("| " + " | ".join(aligns) + " |")
    for row in table.rows:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    if table.notes:
        lines += ["", table.notes]
    return "\n".join(lines) + "\n"


def to_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.csv_header)
    for row in table.csv_rows:
        writer.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


_LATEX_SPECIALS = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def latex_escape(text: str) -> str:
    escaped = "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)
    return escaped.replace(DASH, "--")


def to_latex(table: Table) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), groups as ``\\multicolumn``."""
    spec = "".join("l" if _is_text_column(table, i) else "r" for i in range(len(table.header)))
    lines = [f"% {table.title}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    if table.groups and any(label for label, _ in table.groups):
        cells, rules, col = [], [], 1
        for label, n in table.groups:
            if label:
                cells.append(f"\\multicolumn{{{n}}}{{c}}{{{latex_escape(label)}}}")
                rules.append(f"\\cmidrule(lr){{{col}-{col + n - 1}}}")
            else:
                cells.extend([""] * n)
            col += n
        lines += [" & ".join(cells) + " \\\\", " ".join(rules)]
    lines.append(" & ".join(latex_escape(h) for h in table.header) + " \\\\")
    lines.append("\\midrule")
    for row in table.rows:
        lines.append(" & ".join(latex_escape(c) for c in row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_html(table: Table) -> str:
    """An HTML ``<table>`` fragment (escaped), with a caption and group header row."""
    out = [
        f'<table class="t" id="table-{html.escape(table.name)}">',
        f"<caption>{html.escape(table.title)}</caption>",
        "<thead>",
    ]
    if table.groups and any(label for label, _ in table.groups):
        cells = "".join(f'<th colspan="{n}">{html.escape(label)}</th>' for label, n in table.groups)
        out.append(f'<tr class="group">{cells}</tr>')
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.header) + "</tr></thead><tbody>")
    for row in table.rows:
        cells = "".join(
            f'<td class="{"txt" if _is_text_column(table, i) else "num"}">{html.escape(c)}</td>'
            for i, c in enumerate(row)
        )
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    if table.notes:
        out.append(f'<p class="note">{html.escape(table.notes)}</p>')
    return "\n".join(out)


def _is_text_column(table: Table, i: int) -> bool:
    """Left-align a column whose cells are not numbers (labels, ids)."""
    for row in table.rows:
        cell = row[i].replace(DASH, "").replace(".", "").replace("-", "").strip()
        if cell and not cell.lstrip("+").isdigit():
            return True
    return False
