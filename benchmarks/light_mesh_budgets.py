"""Calibrate how many faces each heavy visual mesh keeps in ``render_quality="fast"``.

A mesh's decimation costs image error only where the cameras see it, so one fraction for
every mesh wastes faces (the stove's far side) and loses detail where it shows (the
gripper, seen by both cameras). This measures, for every heavy mesh of the given tasks,
the squared error each candidate fraction causes on its own: the reference scene is drawn
with only that mesh decimated, on the expert's initial and three mid-episode states
(``render_fidelity.py``'s, cached there), both cameras at 128 and 224 px: in every task that
draws the mesh, except for meshes most tasks draw (robot, kitchen), measured in ``--per-mesh``
tasks. Raw errors go to ``--raw`` (resumable).

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


def record_presence(tasks, raw: dict) -> None:
    """Note in ``raw`` which tasks draw each heavy mesh (a camera-free build per task not yet noted)."""
    noted = {t for entry in raw.values() for t in entry.get("present_in", [])}
    for task in tasks:
        if task.id in noted:
            continue
        plan = plan_episode(task, 0, SEED)
        env = SimEnv(task.bddl(plan.binding))
        try:
            m = env.sim.model._model
            for i in lm.heavy_visual_meshes(m):
                entry = raw.setdefault(lm.source_key(lm.source_mesh(m, i)), {"name": m.mesh(i).name})
                entry["faces"] = int(m.mesh_facenum[i])
                entry["present_in"] = sorted(set(entry.get("present_in", [])) | {task.id})
        finally:
            env.close()


def measure_task(task, states_dir: Path, raw: dict, per_mesh: int, n_tasks: int) -> None:
    """Add to ``raw`` the per-frame squared error of each fraction, on this task's frames, for each
    heavy mesh of the task not measured here yet. A mesh most tasks draw (the robot, the kitchen:
    over half of the ``n_tasks``) is measured in ``per_mesh`` tasks only: the cameras see it alike
    everywhere. Every other mesh is measured in every task that draws it: an object may sit far
    off in one task and fill the wrist camera in the next (a mug held close)."""
    states = expert_states(task, states_dir)
    plan = plan_episode(task, 0, SEED)
    env = SimEnv(task.bddl(plan.binding), render=True)
    try:
        env.reset(plan.layout_seed)
        m = env.sim.model._model
        context = env.sim._render_context_offscreen
        reference = frames(env, states)
        # One mesh can stand for several objects (three red mugs): decimate every instance at once.
        instances: dict[str, list[int]] = {}
        for i in lm.heavy_visual_meshes(m):
            instances.setdefault(lm.source_key(lm.source_mesh(m, i)), []).append(i)
        for key, ids in instances.items():
            source = lm.source_mesh(m, ids[0])
            entry = raw.setdefault(key, {"name": m.mesh(ids[0]).name, "faces": int(m.mesh_facenum[ids[0]])})
            entry["present_in"] = sorted(set(entry.get("present_in", [])) | {task.id})
            counts = entry.setdefault("instances", {})
            measured = entry.setdefault("frame_mse", {})
            common = len(entry["present_in"]) > n_tasks / 2
            if (task.id in measured and counts.get(task.id, 1) == len(ids)) or (
                task.id not in measured and common and len(measured) >= per_mesh
            ):
                continue
            errors = {}
            for fraction in FRACTIONS[:-1]:
                render_model = copy.copy(m)
                light = lm.cached_decimation(
                    source, lm.target_face_count(len(source.face), fraction), lm.default_cache_dir()
                )
                for i in ids:
                    lm.write_mesh(render_model, i, light)
                context.gl_ctx.make_current()
                lm.upload_meshes(render_model, context.con, ids)
                drawn = frames(env, states)
                errors[str(fraction)] = [float(np.mean((a - b) ** 2)) for a, b in zip(drawn, reference, strict=True)]
            context.gl_ctx.make_current()
            lm.upload_meshes(m, context.con, ids)  # the shipped meshes again
            measured[task.id], counts[task.id] = errors, len(ids)
    finally:
        env.close()


def allocate(raw: dict, mean_db: float, worst_db: float) -> dict[str, float]:
    """Per mesh key, the fraction the greedy allocation gives it (see the module docstring).

    A frame's predicted error is the sum of the errors each mesh of its task causes on it
    alone: measured in that task, or else the frame-by-frame mean of the tasks it was measured
    in (same state index, camera and size).
    """
    keys = sorted(k for k in raw if raw[k].get("frame_mse"))
    tasks = sorted({t for k in keys for t in raw[k]["present_in"]})
    n_frames = len(next(iter(next(iter(raw[keys[0]]["frame_mse"].values())).values())))
    level = dict.fromkeys(keys, 0)

    def err(key: str, task: str, lvl: int) -> np.ndarray:
        fraction = FRACTIONS[lvl]
        if fraction == 1.0:
            return np.zeros(n_frames)
        measured = raw[key]["frame_mse"]
        if task in measured:
            return np.asarray(measured[task][str(fraction)])
        return np.mean([measured[t][str(fraction)] for t in measured], axis=0)

    def faces(key: str, lvl: int) -> int:
        """Faces drawn at ``lvl``, for as many instances as a task draws at most."""
        fraction = FRACTIONS[lvl]
        one = raw[key]["faces"] if fraction == 1.0 else lm.target_face_count(raw[key]["faces"], fraction)
        return one * max(raw[key].get("instances", {}).values(), default=1)

    total = {t: np.zeros(n_frames) for t in tasks}
    for k in keys:
        for t in raw[k]["present_in"]:
            total[t] += err(k, t, 0)

    def psnrs() -> np.ndarray:
        mse = np.concatenate([total[t] for t in tasks])
        return np.where(mse > 0, 10 * np.log10(255**2 / np.maximum(mse, 1e-12)), 99.0)

    while True:
        p = psnrs()
        if p.mean() >= mean_db and p.min() >= worst_db:
            break
        # While the mean is short, an upgrade counts the error it removes from every frame; once
        # only the worst frame is short, just what it removes from that frame (upgrades that help
        # elsewhere cost faces without moving the bar).
        worst = None
        if p.mean() >= mean_db:
            flat = int(np.argmin(p))
            worst = (tasks[flat // n_frames], flat % n_frames)
        # The best upgrade of any mesh to any larger level (small meshes hit the face floor, so
        # several fractions can share a face count; the error curve need not be convex).
        best, best_gain = None, 0.0
        for k in keys:
            present_in = raw[k]["present_in"] if worst is None else [worst[0]] * (worst[0] in raw[k]["present_in"])
            now = faces(k, level[k])
            for up in range(level[k] + 1, len(FRACTIONS)):
                added = faces(k, up) - now
                if added <= 0 or not present_in:
                    continue
                gain = [err(k, t, level[k]) - err(k, t, up) for t in present_in]
                removed = sum(float(g.sum() if worst is None else g[worst[1]]) for g in gain)
                if removed / added > best_gain:
                    best, best_gain = (k, up), removed / added
        if best is None:
            break
        k, up = best
        for t in raw[k]["present_in"]:
            total[t] += err(k, t, up) - err(k, t, level[k])
        level[k] = up
    p = psnrs()
    kept, shipped = sum(faces(k, level[k]) for k in keys), sum(faces(k, len(FRACTIONS) - 1) for k in keys)
    print(f"predicted PSNR mean {p.mean():.1f} worst {p.min():.1f}; faces kept {kept:,} of {shipped:,}")
    return {k: FRACTIONS[level[k]] for k in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--states", type=Path, default=Path("results/render-fidelity"), help="render_fidelity.py --out")
    parser.add_argument("--raw", type=Path, default=Path("results/render-fidelity/mesh-errors.json"))
    parser.add_argument("--mean-db", type=float, default=36.0)
    parser.add_argument("--worst-db", type=float, default=32.0)
    parser.add_argument("--allocate-only", action="store_true", help="measure nothing: allocate from --raw")
    parser.add_argument("--per-mesh", type=int, default=3, help="tasks a mesh most tasks draw is measured in")
    args = parser.parse_args()
    raw = json.loads(args.raw.read_text()) if args.raw.exists() else {}
    tasks = [] if args.allocate_only else Suite.load().select(args.tasks)
    record_presence(tasks, raw)
    for task in tasks:
        measure_task(task, args.states, raw, args.per_mesh, len(tasks))
        args.raw.parent.mkdir(parents=True, exist_ok=True)
        args.raw.write_text(json.dumps(raw))
        print(f"{task.id}: {len(raw)} meshes measured", flush=True)
    budgets = allocate(raw, args.mean_db, args.worst_db)
    table = {k: {"name": raw[k]["name"], "faces": raw[k]["faces"], "keep": budgets[k]} for k in sorted(budgets)}
    BUDGETS.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {BUDGETS} ({len(table)} meshes)")


if __name__ == "__main__":
    main()
