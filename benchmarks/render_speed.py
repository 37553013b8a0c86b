"""Camera frame time with light render meshes against the shipped meshes, in one process.

Builds one task's scene twice (``render_quality`` "reference" and "fast"), then prints
for 128 and 224 px the frame time of each quality for both cameras, the ratio (the
number to compare across machines), the PSNR of fast against reference on the initial
scene, and how many faces the decimation removed.

    .venv/bin/python benchmarks/render_speed.py [--task S01] [--repeat 10]
"""

from __future__ import annotations

import argparse
import time

from memobench.core.suite import Suite
from memobench.evaluation.protocol import plan_episode
from memobench.sim.env import CAMERAS, SimEnv
from memobench.sim.light_meshes import heavy_visual_meshes
from memobench.sim.render import psnr


def frame_time(env: SimEnv, camera: str, size: int, repeat: int) -> float:
    env.render(camera, size)  # first frame of a size allocates buffers: not counted
    start = time.perf_counter()
    for _ in range(repeat):
        env.render(camera, size)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="S01")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    task = Suite.load().get(args.task)
    plan = plan_episode(task, 0, 7)
    envs = {}
    for quality in ("reference", "fast"):
        start = time.perf_counter()
        envs[quality] = SimEnv(task.bddl(plan.binding), render=True, render_quality=quality)
        envs[quality].reset(plan.layout_seed)
        print(f"build {quality}: {time.perf_counter() - start:.1f} s")
    ref_model = envs["reference"].sim.model._model
    fast_model = envs["fast"]._render_model
    ids = heavy_visual_meshes(ref_model)
    before, after = int(ref_model.mesh_facenum[ids].sum()), int(fast_model.mesh_facenum[ids].sum())
    print(
        f"task {task.id}: {len(ids)} meshes decimated, {before:,} -> {after:,} faces ({after / before:.1%}); "
        f"scene {int(ref_model.mesh_facenum.sum()):,} -> {int(fast_model.mesh_facenum.sum()):,} faces"
    )
    print(f"{'camera':10s} {'px':>4s} {'reference ms':>13s} {'fast ms':>8s} {'ratio':>6s} {'PSNR dB':>8s}")
    for size in (128, 224):
        for camera in CAMERAS:
            ref_frame, fast_frame = (envs[q].render(camera, size) for q in ("reference", "fast"))
            ref_t, fast_t = (frame_time(envs[q], camera, size, args.repeat) for q in ("reference", "fast"))
            print(
                f"{camera:10s} {size:4d} {ref_t * 1000:13.1f} {fast_t * 1000:8.1f} {ref_t / fast_t:6.2f} "
                f"{psnr(ref_frame, fast_frame):8.1f}"
            )
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
