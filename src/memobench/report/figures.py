"""Report figures (matplotlib, PNG and PDF): heatmap, failure taxonomy, prefix curves, SR vs replan.

Each function draws from :class:`~memobench.report.runs.Run` summaries or
records only, writes ``<stem>.png`` and ``<stem>.pdf`` and returns those paths.
matplotlib is imported inside the functions (headless Agg backend) so that
``import memobench`` stays light. Outputs carry no timestamps, so a report
rebuilt from the same ledgers gives the same files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.records import FailureClass
from memobench.metrics.rates import wilson_interval
from memobench.report.result_tables import MAIN_METRICS
from memobench.report.runs import Run, memory_types_present, tasks_present

DPI = 110
# One colour per outcome: "success" and every FailureClass (tests check none is missing).
OUTCOME_COLOURS = {
    "success": "#4caf50",
    FailureClass.STORAGE_FAILURE.value: "#e53935",
    FailureClass.COMPRESSION_FAILURE.value: "#6d4c41",
    FailureClass.STALE_UPDATE.value: "#fb8c00",
    FailureClass.LATE_STALE.value: "#fdd835",
    FailureClass.OVER_EXECUTION.value: "#8e24aa",
    FailureClass.EXECUTION_FAILURE.value: "#1e88e5",
    FailureClass.ADAPTER_ERROR.value: "#424242",
    FailureClass.ENV_ERROR.value: "#9e9e9e",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)  # headless; never opens a window
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, stem: Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.pdf`` without timestamps; close ``fig``."""
    plt = _pyplot()
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    # Margins are set by each figure (no bbox_inches="tight"): a tight bbox costs an extra full
    # draw per file, which dominated report time with one prefix figure per task.
    fig.savefig(png, dpi=DPI, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None, "Creator": None, "Producer": None})
    plt.close(fig)
    return [png, pdf]


def _colours(keys: Sequence[Any]) -> dict[Any, Any]:
    plt = _pyplot()
    cmap = plt.get_cmap("tab10")
    return {key: cmap(i % 10) for i, key in enumerate(dict.fromkeys(keys))}


def heatmap(runs: Sequence[Run], stem: Path) -> list[Path]:
    """Metric (%) per condition (rows) x memory type and metric (columns, macro last)."""
    plt = _pyplot()
    groups = [*memory_types_present(runs), "macro"]
    data = np.full((len(runs), len(groups) * len(MAIN_METRICS)), np.nan)
    for i, run in enumerate(runs):
        s = run.summary
        for g, group in enumerate(groups):
            for m, metric in enumerate(MAIN_METRICS):
                if group == "macro":
                    value = s["macro"][metric]
                else:
                    entry = s["memory_types"].get(group)
                    value = entry[metric]["value"] if entry else None
                if value is not None:
                    data[i, g * len(MAIN_METRICS) + m] = 100.0 * value
    n_rows, n_cols = data.shape
    label_in = 0.075 * max(len(run.condition.label) for run in runs) + 0.3  # y labels, 8 pt
    width, height = label_in + 0.5 * n_cols + 1.2, 0.4 * n_rows + 1.25
    fig, ax = plt.subplots(figsize=(width, height))
    fig.subplots_adjust(left=label_in / width, right=1 - 1.1 / width, bottom=0.45 / height, top=1 - 0.8 / height)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#e0e0e0")
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for i in range(n_rows):
        for j in range(n_cols):
            v = data[i, j]
            text, colour = ("\u2013", "#555555") if math.isnan(v) else (f"{v:.0f}", "white" if v < 60 else "black")
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(n_cols), [m for _ in groups for m in MAIN_METRICS], fontsize=7)
    ax.set_yticks(range(n_rows), [run.condition.label for run in runs], fontsize=8)
    for g, group in enumerate(groups):
        centre = g * len(MAIN_METRICS) + (len(MAIN_METRICS) - 1) / 2
        ax.text(centre, -0.6, group, ha="center", va="bottom", fontsize=8, fontweight="bold")
        if g:
            ax.axvline(g * len(MAIN_METRICS) - 0.5, color="white", linewidth=2)
    ax.tick_params(length=0)
    cax = fig.add_axes((1 - 0.95 / width, 0.45 / height, 0.12 / width, 1 - 1.25 / height))
    fig.colorbar(image, cax=cax, label="%")
    fig.suptitle("Memory metrics (%) per condition", y=1 - 0.08 / height, va="top", fontsize=10)
    return _save(fig, stem)


def failure_bars(runs: Sequence[Run], stem: Path) -> list[Path]:
    """Per task, one stacked bar per condition: share of episodes by outcome (success or class)."""
    plt = _pyplot()
    tasks = tasks_present(runs)
    outcomes = ["success", *(fc.value for fc in FailureClass)]
    shares: dict[tuple[str, int], dict[str, float]] = {}
    for task_id in tasks:
        for r, run in enumerate(runs):
            t = run.summary["tasks"].get(task_id)
            if t:
                n = t["episodes"]
                shares[(task_id, r)] = {"success": t["SR"]["k"] / n, **{k: v / n for k, v in t["failures"].items()}}
    used = [o for o in outcomes if any(s.get(o, 0) > 0 for s in shares.values())] or ["success"]
    ncols = max(1, min(4, len(tasks)))  # one empty panel when no MEMOBench task ran (an arena-only run)
    nrows = max(1, math.ceil(len(tasks) / ncols))
    # Condition labels under every panel only when tasks differ in conditions; else under the
    # bottom panels alone (fewer text objects: matplotlib's cost is mostly text layout).
    complete = all((task_id, r) in shares for task_id in tasks for r in range(len(runs)))
    label_in = 0.055 * max(len(run.condition.label) for run in runs) + 0.2  # rotated labels, 6 pt
    panel_h = 1.6 + (0 if complete else label_in)
    width, height = 2.5 * ncols + 2.6, panel_h * nrows + (label_in if complete else 0) + 0.7
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, sharey=True)
    fig.subplots_adjust(
        left=0.6 / width,
        right=1 - 2.0 / width,
        top=1 - 0.65 / height,
        bottom=(label_in + 0.1) / height,
        hspace=(0.45 if complete else label_in + 0.35) / 1.6,
        wspace=0.08,
    )
    for i, (ax, task_id) in enumerate(zip(axes.flat, tasks, strict=False)):
        present = [r for r in range(len(runs)) if (task_id, r) in shares]
        bottom = np.zeros(len(present))
        for outcome in used:
            heights = np.array([100.0 * shares[(task_id, r)].get(outcome, 0.0) for r in present])
            ax.bar(
                range(len(present)), heights, bottom=bottom, color=OUTCOME_COLOURS[outcome], width=0.75, label=outcome
            )
            bottom += heights
        bottom_row = i + ncols >= len(tasks)
        if not complete or bottom_row:
            ax.set_xticks(
                range(len(present)), [runs[r].condition.label for r in present], rotation=40, ha="right", fontsize=6
            )
        else:
            ax.set_xticks(range(len(present)), [])
        ax.set_title(_panel_title(task_id), fontsize=7, pad=2)
        ax.set_ylim(0, 100)
        ax.tick_params(labelsize=6, length=2)
    for ax in list(axes.flat)[len(tasks) :]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("% of episodes", fontsize=7)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles[::-1], labels[::-1], loc="center right", fontsize=7, title="outcome", title_fontsize=8)
    fig.suptitle("Outcome of every episode (failure taxonomy)", y=1 - 0.1 / height, va="top", fontsize=10)
    return _save(fig, stem)


# A 7-pt title wider than this runs into its neighbour's (panels are 2.5 in wide).
PANEL_TITLE_CHARS = 44


def _panel_title(task_id: str) -> str:
    """``task_id``, or its head cut at a hyphen with an ellipsis if it would not fit a panel."""
    if len(task_id) <= PANEL_TITLE_CHARS:
        return task_id
    return task_id[: task_id.rindex("-", 0, PANEL_TITLE_CHARS)] + "…"


def prefix_completion(runs: Sequence[Run], task_id: str, stem: Path) -> list[Path]:
    """For one task: % of episodes that completed checkpoints 1..k, per checkpoint k and condition,
    with 95% Wilson bands. Under prefix completion this is the share completing checkpoint k."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 3.2))
    fig.subplots_adjust(left=0.09, right=0.66, bottom=0.2, top=0.9)
    colours = _colours([run.condition.label for run in runs])
    ticks: list[str] = []
    for run in runs:
        records = [r for r in run.records if r.task_id == task_id]
        if not records:
            continue
        n_cp = max(len(r.checkpoints) for r in records)
        done = np.zeros(n_cp, dtype=int)
        total = np.zeros(n_cp, dtype=int)
        ops: dict[int, str] = {}
        for record in records:
            for cp in record.checkpoints:
                total[cp.index] += 1
                done[cp.index] += cp.completed
                ops[cp.index] = cp.op.value[0].upper() + ("*" if cp.optional else "")
        x = np.arange(1, n_cp + 1)
        value = 100.0 * done / np.maximum(total, 1)
        band = np.array(
            [wilson_interval(int(k), int(n)) if n else (np.nan, np.nan) for k, n in zip(done, total, strict=True)]
        )
        colour = colours[run.condition.label]
        ax.plot(x, value, marker="o", markersize=4, color=colour, label=f"{run.condition.label} (n={len(records)})")
        ax.fill_between(x, 100 * band[:, 0], 100 * band[:, 1], color=colour, alpha=0.12, linewidth=0)
        if len(ops) > len(ticks):
            ticks = [f"{i + 1}\n{ops.get(i, '?')}" for i in range(n_cp)]
    ax.set_xticks(range(1, len(ticks) + 1), ticks, fontsize=7)
    ax.set_xlabel("checkpoint (S storage, U update, C compression; * optional)", fontsize=8)
    ax.set_ylabel("% of episodes completed", fontsize=8)
    ax.set_ylim(-3, 103)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    ax.set_title(f"{task_id}: prefix completion", fontsize=9)
    return _save(fig, stem)


def sr_vs_replan(runs: Sequence[Run], stem: Path) -> list[Path]:
    """SR (%) against replan interval k, one line per (policy, oracle), with 95% Wilson error bars;
    a panel for all tasks, then one per memory type."""
    plt = _pyplot()
    panels = ["all tasks", *memory_types_present(runs)]
    series: dict[str, list[Run]] = {}
    for run in runs:
        c = run.condition
        key = c.policy + (f" oracle={c.memory_oracle}" if c.memory_oracle else "")
        series.setdefault(key, []).append(run)
    colours = _colours(list(series))
    ks = sorted({run.condition.replan_steps for run in runs})
    legend_in = 0.06 * max(len(key) for key in series) + 0.7
    width, height = 2.4 * len(panels) + 0.7 + legend_in, 3.0
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height), squeeze=False, sharey=True)
    fig.subplots_adjust(
        left=0.6 / width, right=1 - legend_in / width, bottom=0.55 / height, top=1 - 0.6 / height, wspace=0.08
    )
    for ax, panel in zip(axes[0], panels, strict=True):
        for s, (key, members) in enumerate(series.items()):
            xs, ys, lo, hi = [], [], [], []
            for run in sorted(members, key=lambda r: r.condition.replan_steps):
                entry = run.summary["overall"] if panel == "all tasks" else run.summary["memory_types"].get(panel)
                if not entry or not entry["SR"]["n"]:
                    continue
                rate = entry["SR"]
                low, high = wilson_interval(rate["k"], rate["n"])
                # a small multiplicative offset keeps overlapping error bars apart on the log axis
                xs.append(run.condition.replan_steps * (1 + 0.04 * (s - (len(series) - 1) / 2)))
                ys.append(100 * rate["value"])
                lo.append(100 * (rate["value"] - low))
                hi.append(100 * (high - rate["value"]))
            if xs:
                ax.errorbar(
                    xs,
                    ys,
                    yerr=[lo, hi],
                    marker="o",
                    markersize=4,
                    capsize=2,
                    color=colours[key],
                    label=key,
                    linewidth=1.2,
                )
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks], fontsize=7)
        ax.minorticks_off()
        ax.set_xlim(min(ks) / 1.4, max(ks) * 1.4)
        ax.set_ylim(-3, 103)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("replan interval k", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("SR %", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7)
    fig.suptitle("Success rate vs replan interval (95% Wilson)", fontsize=10)
    return _save(fig, stem)
