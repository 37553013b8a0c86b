"""Annotation agreement on the checkpoints' memory-op labels.

:func:`export_sheet` writes a blind relabelling sheet: every checkpoint of the
suite (its task instruction and three texts), shuffled, with the op label
hidden and an empty ``label`` column to fill with ``storage``, ``update`` or
``compression``; the answer key goes to a separate file. :func:`agreement`
computes Fleiss' kappa over any number of filled sheets, per-category
agreement, observed vs chance agreement, and compares the majority label
with the suite's labels.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.spec import MemoryOp
from memobench.metrics.agreement import fleiss_kappa

SHEET_COLUMNS = ("item", "instruction", "coarse", "intermediate", "fine", "label")
KEY_COLUMNS = ("item", "task_id", "checkpoint_index", "checkpoint_id", "op")
CATEGORIES: tuple[str, ...] = tuple(op.value for op in MemoryOp)
INSTRUCTIONS = """# Relabelling sheet: memory operation of each checkpoint

Each row of `sheet.csv` is one checkpoint of a MEMOBench task: the task's instruction
and the checkpoint described at three levels of detail. Rows are shuffled across
tasks. Fill the `label` column with exactly one of:

- `storage`: the checkpoint shows the policy stored what it observed (e.g. looked into
  a drawer, saw where an object went, watched the cue);
- `update`: the checkpoint needs the stored memory revised after the world changed
  (e.g. act on the new state, not the old one);
- `compression`: the checkpoint needs a condensed summary of a long history (e.g. a
  count, an order, a set of several observations).

Work alone; do not look at the task files or `key.csv`. Save the file under a new name
(e.g. `sheet-alice.csv`), then run `memobench kappa sheet-*.csv --key key.csv`.
"""


class SheetError(ValueError):
    """A sheet or key file cannot be used; the message names the file and row."""


def export_sheet(tasks: Sequence[Any], out_dir: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write ``sheet.csv`` (blind), ``key.csv`` (answers) and ``INSTRUCTIONS.md`` into ``out_dir``.

    ``tasks``: loaded :class:`~memobench.core.suite.Task` objects. Rows are shuffled by
    ``numpy.random.default_rng(seed)``; items are numbered ``c001``... in sheet order.
    Returns (sheet path, key path).
    """
    rows = [(task, i, cp) for task in tasks for i, cp in enumerate(task.spec.checkpoints)]
    order = np.random.default_rng(seed).permutation(len(rows))
    width = max(3, len(str(len(rows))))
    sheet, key = [], []
    for n, idx in enumerate(order, start=1):
        task, i, cp = rows[idx]
        item = f"c{n:0{width}d}"
        sheet.append([item, task.spec.instruction, cp.text.coarse, cp.text.intermediate, cp.text.fine, ""])
        key.append([item, task.id, i, cp.id, cp.op.value])
    out_dir.mkdir(parents=True, exist_ok=True)
    sheet_path, key_path = out_dir / "sheet.csv", out_dir / "key.csv"
    sheet_path.write_text(_csv(SHEET_COLUMNS, sheet))
    key_path.write_text(_csv(KEY_COLUMNS, key))
    (out_dir / "INSTRUCTIONS.md").write_text(INSTRUCTIONS)
    return sheet_path, key_path


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _read_rows(path: Path, needed: Sequence[str]) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            missing = [c for c in needed if c not in (reader.fieldnames or [])]
            if missing:
                raise SheetError(f"{path}: missing column(s) {', '.join(missing)}; found {reader.fieldnames}")
            return list(reader)
    except FileNotFoundError:
        raise SheetError(f"{path}: no such file") from None


def read_sheet(path: Path, categories: Sequence[str] = CATEGORIES) -> dict[str, str]:
    """``{item: label}`` of one filled sheet; labels lower-cased and checked against ``categories``.

    Raises :class:`SheetError` naming the file, row and item for an empty, unknown or
    repeated entry.
    """
    labels: dict[str, str] = {}
    for line, row in enumerate(_read_rows(path, ("item", "label")), start=2):
        item, label = (row["item"] or "").strip(), (row["label"] or "").strip().lower()
        if not item:
            raise SheetError(f"{path}:{line}: empty item id")
        if item in labels:
            raise SheetError(f"{path}:{line}: item {item} appears twice")
        if label not in categories:
            what = "no label" if not label else f"label {label!r}"
            raise SheetError(f"{path}:{line}: item {item} has {what}; use one of {', '.join(categories)}")
        labels[item] = label
    return labels


def read_key(path: Path) -> dict[str, str]:
    """``{item: op}`` from an exported ``key.csv``."""
    return {row["item"].strip(): row["op"].strip() for row in _read_rows(path, ("item", "op"))}


@dataclass
class AgreementResult:
    """Fleiss' kappa and friends over ``annotators`` sheets of the same ``items``."""

    annotators: int
    items: list[str]
    categories: list[str]
    kappa: float
    observed: float  # mean pairwise agreement per item (P-bar)
    chance: float  # agreement expected from the category shares (P-bar-e)
    category_share: dict[str, float]
    category_kappa: dict[str, float]  # each category against all others
    consensus: dict[str, str | None]  # majority label per item; None on a tie
    reference: dict[str, float | int | dict] = field(default_factory=dict)  # vs the suite's labels

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "items"} | {"n_items": len(self.items)}


def agreement(
    sheets: Sequence[dict[str, str]],
    categories: Sequence[str] = CATEGORIES,
    names: Sequence[str] | None = None,
    key: dict[str, str] | None = None,
) -> AgreementResult:
    """Agreement of ``sheets`` (each ``{item: label}``, at least two, same items).

    With ``key`` (``{item: op}``), ``reference`` holds the consensus's accuracy against it
    (items with a majority), the number of ties, and a confusion ``{key label: {consensus: n}}``.
    Raises :class:`SheetError` when sheets differ in items (naming the sheet) or fewer than two.
    """
    names = list(names or [f"sheet {i + 1}" for i in range(len(sheets))])
    if len(sheets) < 2:
        raise SheetError(f"Fleiss' kappa needs at least two annotators' sheets; got {len(sheets)}")
    items = sorted(sheets[0])
    for name, sheet in zip(names[1:], sheets[1:], strict=True):
        if set(sheet) != set(items):
            missing, extra = sorted(set(items) - set(sheet)), sorted(set(sheet) - set(items))
            raise SheetError(
                f"{name} does not label the same items as {names[0]}: missing "
                f"{missing[:5] or 'none'}, extra {extra[:5] or 'none'}"
            )
    cats = list(categories)
    counts = np.zeros((len(items), len(cats)), dtype=int)
    for sheet in sheets:
        for i, item in enumerate(items):
            counts[i, cats.index(sheet[item])] += 1
    fk = fleiss_kappa(counts.tolist())
    consensus: dict[str, str | None] = {}
    for i, item in enumerate(items):
        top = counts[i].max()
        winners = [cats[j] for j in range(len(cats)) if counts[i, j] == top]
        consensus[item] = winners[0] if len(winners) == 1 else None
    result = AgreementResult(
        len(sheets),
        items,
        cats,
        fk.kappa,
        fk.observed,
        fk.chance,
        dict(zip(cats, fk.category_share, strict=True)),
        dict(zip(cats, fk.per_category_kappa, strict=True)),
        consensus,
    )
    if key is not None:
        unknown = sorted(set(items) - set(key))
        if unknown:
            raise SheetError(f"the key has no answer for item(s) {unknown[:5]}; is it the key of these sheets?")
        decided = [item for item in items if consensus[item] is not None]
        confusion: dict[str, Counter] = {c: Counter() for c in cats}
        for item in items:
            confusion.setdefault(key[item], Counter())[consensus[item] or "tie"] += 1
        agree = sum(consensus[item] == key[item] for item in decided)
        result.reference = {
            "items_with_majority": len(decided),
            "ties": len(items) - len(decided),
            "agree_with_suite": agree,
            "accuracy": agree / len(decided) if decided else float("nan"),
            "confusion": {k: dict(v) for k, v in confusion.items()},
        }
    return result


def agreement_markdown(result: AgreementResult) -> str:
    """A short Markdown summary of :func:`agreement`."""
    lines = [
        f"# Annotation agreement ({result.annotators} annotators, {len(result.items)} checkpoints)",
        "",
        f"- Fleiss' kappa: **{result.kappa:.3f}**",
        f"- observed agreement (P-bar): {result.observed:.3f}; chance agreement (P-bar-e): {result.chance:.3f}",
        "",
        "| category | share of labels | kappa (category vs rest) |",
        "| --- | ---: | ---: |",
    ]
    for c in result.categories:
        lines.append(f"| {c} | {result.category_share[c]:.3f} | {result.category_kappa[c]:.3f} |")
    ref = result.reference
    if ref:
        lines += [
            "",
            f"Consensus (majority) vs the suite's labels: {ref['agree_with_suite']} of "
            f"{ref['items_with_majority']} items with a majority agree (accuracy {ref['accuracy']:.3f}); "
            f"{ref['ties']} ties.",
            "",
            "| suite label | " + " | ".join([*result.categories, "tie"]) + " |",
            "| --- |" + " ---: |" * (len(result.categories) + 1),
        ]
        for label, row in ref["confusion"].items():
            lines.append(f"| {label} | " + " | ".join(str(row.get(c, 0)) for c in [*result.categories, "tie"]) + " |")
    return "\n".join(lines) + "\n"
