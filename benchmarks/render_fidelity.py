"""Fidelity of light render meshes: PSNR of ``render_quality="fast"`` against ``"reference"``.

For each task: the expert's episode for seed 7 is run camera-free once (its states are kept
in ``OUT/states/<task>.npz``, so a rerun only renders), then its initial scene and three
mid-episode states (at 1/4, 1/2 and 3/4 of the episode) are drawn by both qualities, with
both cameras at 128 and 224 px. Per task the PSNRs go to ``OUT/<task>.json`` (a finished
task is skipped on a rerun); at the end the summary (mean, worst, per camera and size) is
printed and written to ``OUT/summary.json``, and ``--figure`` gets the worst frame side by
side (reference | fast | 4x absolute difference).

    MUJOCO_GL=egl .venv/bin/python benchmarks/render_fidelity.py [--tasks all] [--out results/render-fidelity]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from memobench.core.suite import Suite
from memobench.data.collect import record_demo
from memobench.evaluation.envs import EnvCache
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.policies.adapter import AdapterGuard
from memobench.policies.loader import build_adapter, builtin_spec
from memobench.sim.env import CAMERAS, SimEnv
from memobench.sim.render import psnr

SEED = 7
SIZES = (128, 224)


def expert_states(task, out: Path) -> np.ndarray:
    """The initial and three mid-episode integration states of the expert's seed-7 episode (cached)."""
    path = out / "states" / f"{task.id}.npz"
    if path.exists():
        with np.load(path) as f:
            return f["states"]
    plan = plan_episode(task, 0, SEED)
    envs, guard = EnvCache(capacity=1), AdapterGuard(build_adapter(builtin_spec("expert")), timeout=None)
    try:
        env, _ = envs.get(task, plan.variant, plan.binding, render=False)
        _, demo = record_demo(task, 0, SEED, env, guard, Protocol(seed=SEED, adapter_timeout=0))
    finally:
        envs.close()
        guard.close()
    states = demo.arrays["states"]
    picks = [0, len(states) // 4, len(states) // 2, 3 * len(states) // 4]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, states=states[picks], steps=np.array(picks))
    return states[picks]


def task_fidelity(task, out: Path) -> list[dict]:
    """PSNR rows (state index, camera, size, psnr) of one task; the frames of its worst row."""
    states = expert_states(task, out)
    plan = plan_episode(task, 0, SEED)
    bddl = task.bddl(plan.binding)
    envs = {q: SimEnv(bddl, render=True, render_quality=q) for q in ("reference", "fast")}
    rows, worst = [], (np.inf, None)
    try:
        for env in envs.values():
            env.reset(plan.layout_seed)
        for k, state in enumerate(states):
            for camera in CAMERAS:
                for size in SIZES:
                    ref, fast = (envs[q].render_state(state, camera, size) for q in ("reference", "fast"))
                    value = psnr(ref, fast)
                    rows.append({"state": k, "camera": camera, "size": size, "psnr": value})
                    if value < worst[0]:
                        worst = (value, (ref, fast))
    finally:
        for env in envs.values():
            env.close()
    np.savez(out / "frames" / f"{task.id}.npz", reference=worst[1][0], fast=worst[1][1])
    return rows


def _stats(values: list[float]) -> dict:
    """Mean over the frames that differ, the worst, how many are identical, and the PSNR of the mean error."""
    p = np.asarray(values, dtype=float)
    finite = p[np.isfinite(p)]
    mse = np.where(np.isfinite(p), 255.0**2 / 10 ** (np.where(np.isfinite(p), p, 0) / 10), 0.0)
    return {
        "mean": float(finite.mean()) if len(finite) else float("inf"),
        "worst": float(p.min()),
        "identical": int((~np.isfinite(p)).sum()),
        "psnr_of_mean_error": float(10 * np.log10(255.0**2 / mse.mean())) if mse.mean() > 0 else float("inf"),
    }


def summarise(results: dict[str, list[dict]]) -> dict:
    rows = [dict(r, task=t) for t, rs in results.items() for r in rs]
    by = {
        f"{camera}@{size}": _stats([r["psnr"] for r in rows if (r["camera"], r["size"]) == (camera, size)])
        for camera in CAMERAS
        for size in SIZES
    }
    return {
        "frames": len(rows),
        **_stats([r["psnr"] for r in rows]),
        "worst_frame": min(rows, key=lambda r: r["psnr"]),
        "by_camera_size": by,
        "note": "mean: over the frames that differ (identical ones have infinite PSNR and are counted apart)",
    }


def write_figure(out: Path, worst: dict, figure: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with np.load(out / "frames" / f"{worst['task']}.npz") as f:
        ref, fast = f["reference"], f["fast"]
    diff = np.clip(np.abs(ref.astype(int) - fast.astype(int)) * 4, 0, 255).astype(np.uint8)
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.3))
    for ax, image, title in zip(axes, (ref, fast, diff), ("reference", "fast", "|difference| x 4"), strict=True):
        ax.imshow(image)
        ax.set_title(title)
        ax.axis("off")
    fig.suptitle(f"worst frame: {worst['task']} {worst['camera']} {worst['size']} px, PSNR {worst['psnr']:.1f} dB")
    fig.tight_layout()
    figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(figure, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--out", type=Path, default=Path("results/render-fidelity"))
    parser.add_argument("--figure", type=Path, default=None, help="PNG of the worst frame")
    args = parser.parse_args()
    (args.out / "frames").mkdir(parents=True, exist_ok=True)
    results = {}
    for task in Suite.load().select(args.tasks):
        path = args.out / f"{task.id}.json"
        if not path.exists():
            path.write_text(json.dumps(task_fidelity(task, args.out)))
        results[task.id] = json.loads(path.read_text())
        stats = _stats([r["psnr"] for r in results[task.id]])
        print(f"{task.id:55s} mean {stats['mean']:5.1f} worst {stats['worst']:5.1f} identical {stats['identical']}")
    summary = summarise(results)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    if args.figure:
        write_figure(args.out, summary["worst_frame"], args.figure)


if __name__ == "__main__":
    main()
