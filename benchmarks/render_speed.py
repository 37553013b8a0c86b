"""Camera frame time with light render meshes against the shipped meshes, in one process.

Builds one task's scene twice (``render_quality`` "reference" and "fast"), then prints:

- per camera and size (128, 224 px) the frame time of each quality, their ratio (the number
  to compare across machines) and the PSNR of fast against reference on the initial scene;
- where a fast frame's time goes: the state copy and forward pass around it, the scene
  update, the draw, the read-back, the flip and the resize to the policy's size;
- image-evaluation throughput: control steps per second with both cameras drawn before
  every query, at replan 5 and 1, and camera-free, for each quality;
- ``data render`` throughput: frames per second replaying stored states (both cameras).

Timings alternate between the qualities so that load from other processes hits both alike.

    MUJOCO_GL=egl .venv/bin/python benchmarks/render_speed.py [--task S01] [--repeat 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memobench.core.suite import Suite
from memobench.evaluation.protocol import plan_episode
from memobench.sim.env import CAMERAS, SimEnv
from memobench.sim.light_meshes import heavy_visual_meshes
from memobench.sim.render import psnr, resize_with_pad

QUALITIES = ("reference", "fast")


def per_call(function, repeat: int) -> float:
    function()  # the first call of a size allocates buffers: not counted
    start = time.perf_counter()
    for _ in range(repeat):
        function()
    return (time.perf_counter() - start) / repeat


def interleaved(functions: dict, repeat: int, rounds: int = 3) -> dict[str, float]:
    """Seconds per call of each function, best of ``rounds`` alternating rounds."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(rounds):
        for name, function in functions.items():
            best[name] = min(best[name], per_call(function, repeat))
    return best


def breakdown(env: SimEnv, camera: str, size: int, repeat: int) -> dict[str, float]:
    """Milliseconds of each part of one frame (SimEnv.render's steps, done one by one)."""
    import mujoco

    m, d = env.sim.model._model, env.sim.data._data
    context = env.sim._render_context_offscreen
    scratch = mujoco.MjData(m)
    viewport = mujoco.MjrRect(0, 0, size, size)
    rgb = np.empty((size, size, 3), np.uint8)
    context.gl_ctx.make_current()
    context.cam.type, context.cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FIXED, m.camera(CAMERAS[camera]).id
    parts = {
        "state copy + forward": lambda: (
            mujoco.mj_copyData(scratch, m, d),
            mujoco.mj_forward(m, d),
            mujoco.mj_copyData(d, m, scratch),
        ),
        "scene update": lambda: mujoco.mjv_updateScene(
            m, d, context.vopt, context.pert, context.cam, mujoco.mjtCatBit.mjCAT_ALL, context.scn
        ),
        "draw": lambda: mujoco.mjr_render(viewport, context.scn, context.con),
        "read-back": lambda: mujoco.mjr_readPixels(rgb, None, viewport, context.con),
        "flip": lambda: np.ascontiguousarray(rgb[::-1]),
        "resize to 224": lambda: resize_with_pad(rgb, 224),
    }
    return {name: per_call(f, repeat) * 1000 for name, f in parts.items()}


def steps_per_second(env: SimEnv, replan: int, cameras: bool, steps: int = 60) -> float:
    rng = np.random.default_rng(0)
    actions = rng.uniform(-0.3, 0.3, size=(steps, 7))
    start = time.perf_counter()
    for i, action in enumerate(actions):
        if cameras and i % replan == 0:
            for camera in CAMERAS:
                resize_with_pad(env.render(camera, 256), 224)
        env.step(action)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="S01")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    task = Suite.load().get(args.task)
    plan = plan_episode(task, 0, 7)
    envs = {}
    for quality in QUALITIES:
        start = time.perf_counter()
        envs[quality] = SimEnv(task.bddl(plan.binding), render=True, render_quality=quality)
        envs[quality].reset(plan.layout_seed)
        print(f"build {quality}: {time.perf_counter() - start:.1f} s")
    ref_model = envs["reference"].sim.model._model
    fast_model = envs["fast"]._render_model
    ids = heavy_visual_meshes(ref_model)
    before, after = int(ref_model.mesh_facenum[ids].sum()), int(fast_model.mesh_facenum[ids].sum())
    print(
        f"task {task.id}: {len(ids)} heavy meshes, {before:,} -> {after:,} faces ({after / before:.1%}); "
        f"scene {int(ref_model.mesh_facenum.sum()):,} -> {int(fast_model.mesh_facenum.sum()):,} faces"
    )
    initial_state = envs["reference"].physics_state()

    print(f"\n{'camera':10s} {'px':>4s} {'reference ms':>13s} {'fast ms':>8s} {'ratio':>6s} {'PSNR dB':>8s}")
    for size in (128, 224):
        for camera in CAMERAS:
            frames = {q: envs[q].render(camera, size) for q in QUALITIES}
            draw = {q: (lambda q=q, c=camera, s=size: envs[q].render(c, s)) for q in QUALITIES}
            t = interleaved(draw, args.repeat)
            print(
                f"{camera:10s} {size:4d} {t['reference'] * 1000:13.1f} {t['fast'] * 1000:8.1f} "
                f"{t['reference'] / t['fast']:6.2f} {psnr(frames['reference'], frames['fast']):8.1f}"
            )

    print("\nwhere a fast 128-px frame's time goes (ms):")
    for camera in CAMERAS:
        parts = breakdown(envs["fast"], camera, 128, args.repeat)
        print(f"  {camera:10s} " + ", ".join(f"{name} {ms:.2f}" for name, ms in parts.items()))

    print("\nimage evaluation, control steps/s (both cameras at 256 px, resized to 224, before every query):")
    for quality in QUALITIES:
        env = envs[quality]
        rates = {}
        for label, replan, cameras in (("replan 5", 5, True), ("replan 1", 1, True), ("camera-free", 1, False)):
            env.reset(plan.layout_seed)
            rates[label] = steps_per_second(env, replan, cameras)
        print(f"  {quality:10s} " + ", ".join(f"{label} {rate:.1f}" for label, rate in rates.items()))

    print("\ndata render, frames/s replaying stored states (both cameras, 128 px):")
    for quality in QUALITIES:
        env = envs[quality]
        seconds = per_call(lambda env=env: [env.render_state(initial_state, c, 128) for c in CAMERAS], args.repeat)
        print(f"  {quality:10s} {2 / seconds:.1f}")
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
