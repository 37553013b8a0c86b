"""Calibrate how many faces each heavy visual mesh keeps in ``render_quality="fast"``.

A mesh's decimation costs image error only where the cameras see it, so one fraction for
every mesh wastes faces (the stove's far side) and loses detail where it shows (the
gripper, seen by both cameras). This measures, for every heavy mesh of the given tasks,
the squared error each candidate fraction causes on its own: the reference scene is drawn
with only that mesh decimated, on the expert's initial and three mid-episode states
(``render_fidelity.py``'s, cached there), both cameras at 128 and 224 px, in up to
``--per-mesh`` tasks per mesh (by content hash). Raw errors go to ``--raw`` (resumable).

It then allocates: every mesh starts at the smallest fraction and, greedily, the upgrade
with the most error removed per face added is taken, until the predicted mean PSNR (the
per-mesh errors summed per frame) reaches ``--mean-db`` and the worst frame ``--worst-db``.
The chosen fraction of every mesh is written to ``src/memobench/sim/light_mesh_budgets.json``
(keyed by the mesh's content hash), which :func:`memobench.sim.light_meshes.light_render_model`
reads. Check the result with ``render_fidelity.py`` (the prediction assumes errors add).

    MUJOCO_GL=egl .venv/bin/python benchmarks/light_mesh_budgets.py [--tasks all]
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import numpy as np
from render_fidelity import SEED, SIZES, expert_states

from memobench.core.suite import Suite
from memobench.evaluation.protocol import plan_episode
from memobench.sim import light_meshes as lm
from memobench.sim.env import CAMERAS, SimEnv

FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.35, 0.6, 1.0)  # 1.0 keeps the mesh as shipped
BUDGETS = Path(lm.__file__).with_name("light_mesh_budgets.json")


def frames(env: SimEnv, states: np.ndarray) -> np.ndarray:
    """Every calibration frame of the env's current meshes, float32 [n, ...] in a fixed order."""
    return [env.render_state(s, c, size).astype(np.float32) for s in states for c in CAMERAS for size in SIZES]


def measure_task(task, states_dir: Path, raw: dict, per_mesh: int) -> None:
    """Add to ``raw`` the per-frame squared error of each fraction, on this task's frames, for each
    heavy mesh of the task measured in fewer than ``per_mesh`` tasks so far."""
    states = expert_states(task, states_dir)
    plan = plan_episode(task, 0, SEED)
    env = SimEnv(task.bddl(plan.binding), render=True)
    try:
        env.reset(plan.layout_seed)
        m = env.sim.model._model
        context = env.sim._render_context_offscreen
        reference = frames(env, states)
        for i in lm.heavy_visual_meshes(m):
            source = lm.source_mesh(m, i)
            entry = raw.setdefault(lm.source_key(source), {"name": m.mesh(i).name, "faces": int(m.mesh_facenum[i])})
            measured = entry.setdefault("frame_mse", {})
            if task.id in measured or len(measured) >= per_mesh:
                continue
            errors = {}
            for fraction in FRACTIONS[:-1]:
                render_model = copy.copy(m)
                target = lm.target_face_count(int(m.mesh_facenum[i]), fraction)
                lm.write_mesh(render_model, i, lm.cached_decimation(source, target, lm.default_cache_dir()))
                context.gl_ctx.make_current()
                lm.upload_meshes(render_model, context.con, [i])
                drawn = frames(env, states)
                errors[str(fraction)] = [float(np.mean((a - b) ** 2)) for a, b in zip(drawn, reference, strict=True)]
            context.gl_ctx.make_current()
            lm.upload_meshes(m, context.con, [i])  # the shipped mesh again
            measured[task.id] = errors
    finally:
        env.close()


def allocate(raw: dict, mean_db: float, worst_db: float) -> dict[str, float]:
    """Per mesh key, the fraction the greedy allocation gives it (see the module docstring).

    A frame's predicted error is the sum of the errors its task's measured meshes cause on it
    alone; a mesh not measured in a task adds nothing there (it was measured in others).
    """
    keys = sorted(k for k in raw if raw[k].get("frame_mse"))
    tasks = sorted({t for k in keys for t in raw[k]["frame_mse"]})
    n_frames = len(next(iter(next(iter(raw[keys[0]]["frame_mse"].values())).values())))
    level = dict.fromkeys(keys, 0)

    def err(key: str, task: str, lvl: int) -> np.ndarray:
        fraction = FRACTIONS[lvl]
        return np.zeros(n_frames) if fraction == 1.0 else np.asarray(raw[key]["frame_mse"][task][str(fraction)])

    def faces(key: str, lvl: int) -> int:
        fraction = FRACTIONS[lvl]
        return raw[key]["faces"] if fraction == 1.0 else lm.target_face_count(raw[key]["faces"], fraction)

    total = {t: np.zeros(n_frames) for t in tasks}
    for k in keys:
        for t in raw[k]["frame_mse"]:
            total[t] += err(k, t, 0)

    def psnrs() -> np.ndarray:
        mse = np.concatenate([total[t] for t in tasks])
        return np.where(mse > 0, 10 * np.log10(255**2 / np.maximum(mse, 1e-12)), 99.0)

    while True:
        p = psnrs()
        if p.mean() >= mean_db and p.min() >= worst_db:
            break
        best, best_gain = None, 0.0
        for k in keys:
            if level[k] + 1 >= len(FRACTIONS):
                continue
            # error removed per task it was measured in: a mean, so widely measured meshes do not count double
            removed = np.mean(
                [float((err(k, t, level[k]) - err(k, t, level[k] + 1)).sum()) for t in raw[k]["frame_mse"]]
            )
            added = max(1, faces(k, level[k] + 1) - faces(k, level[k]))
            if removed / added > best_gain:
                best, best_gain = k, removed / added
        if best is None:
            break
        for t in raw[best]["frame_mse"]:
            total[t] += err(best, t, level[best] + 1) - err(best, t, level[best])
        level[best] += 1
    p = psnrs()
    kept, shipped = sum(faces(k, level[k]) for k in keys), sum(raw[k]["faces"] for k in keys)
    print(f"predicted PSNR mean {p.mean():.1f} worst {p.min():.1f}; faces kept {kept:,} of {shipped:,}")
    return {k: FRACTIONS[level[k]] for k in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--states", type=Path, default=Path("results/render-fidelity"), help="render_fidelity.py --out")
    parser.add_argument("--raw", type=Path, default=Path("results/render-fidelity/mesh-errors.json"))
    parser.add_argument("--mean-db", type=float, default=36.0)
    parser.add_argument("--worst-db", type=float, default=31.0)
    parser.add_argument("--per-mesh", type=int, default=3, help="tasks a mesh is measured in, at most")
    args = parser.parse_args()
    raw = json.loads(args.raw.read_text()) if args.raw.exists() else {}
    for task in Suite.load().select(args.tasks):
        measure_task(task, args.states, raw, args.per_mesh)
        args.raw.parent.mkdir(parents=True, exist_ok=True)
        args.raw.write_text(json.dumps(raw))
        print(f"{task.id}: {len(raw)} meshes measured", flush=True)
    budgets = allocate(raw, args.mean_db, args.worst_db)
    table = {k: {"name": raw[k]["name"], "faces": raw[k]["faces"], "keep": budgets[k]} for k in sorted(budgets)}
    BUDGETS.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {BUDGETS} ({len(table)} meshes)")


if __name__ == "__main__":
    main()
