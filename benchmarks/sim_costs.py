"""Simulator costs on this machine, and the harness's overhead over bare stepping.

Prints absolute times (env build, reset, camera frame) for orientation and, as the
number to compare across machines, the ratio of harness step throughput to bare
LIBERO stepping measured in the same process.

    .venv/bin/python benchmarks/sim_costs.py [--task T03] [--steps 400]
"""

from __future__ import annotations

import argparse
import time

from memobench.core.suite import Suite
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.policies.adapter import AdapterGuard
from memobench.policies.builtin import NoopPolicy
from memobench.sim import env as sim_env
from memobench.sim import fast_controller
from memobench.sim.env import NOOP_ACTION, SimEnv, skip_libero_goal_check


def timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def on_off_ratio(env, steps: int, switch, block: int = 10) -> float:
    """Step time with an optimisation on over step time with it off (``switch(bool)``), from
    alternating blocks of ``block`` steps, so the machine's load moves both alike; left on."""
    seconds = {True: 0.0, False: 0.0}
    for b in range(max(2, steps // block)):
        for on in (True, False) if b % 2 else (False, True):
            switch(on)
            seconds[on] += timed(lambda: env.step(NOOP_ACTION), repeat=block)
    switch(True)
    return seconds[True] / seconds[False]


def snapshot_ratio(env, repeat: int, block: int = 10) -> float:
    """Time of a snapshot dropped at once (the experts' queries) copied into a spare mjData over
    one into a new mjData (no spares kept), from alternating blocks; spares kept again after."""
    seconds = {True: 0.0, False: 0.0}
    kept = sim_env.MAX_SPARE_DATA
    for b in range(max(2, repeat // block)):
        for spare in (True, False) if b % 2 else (False, True):
            sim_env.MAX_SPARE_DATA = kept if spare else 0
            env._spare_data.clear()
            seconds[spare] += timed(env.snapshot, repeat=block)
    sim_env.MAX_SPARE_DATA = kept
    return seconds[True] / seconds[False]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="T03")
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    task = Suite.load().get(args.task)
    plan = plan_episode(task, 0, 7)

    SimEnv(task.bddl(plan.binding)).close()  # importing LIBERO is not counted
    build_free = timed(lambda: SimEnv(task.bddl(plan.binding)).close(), repeat=3)
    env = SimEnv(task.bddl(plan.binding), render=True)
    # More builds with a renderer, so EGL start-up is not counted.
    build_render = timed(lambda: SimEnv(task.bddl(plan.binding), render=True).close(), repeat=3)
    env.reset(plan.layout_seed)
    reset = timed(lambda: env.reset(plan.layout_seed), repeat=5)

    bare = timed(lambda: env.step(NOOP_ACTION), repeat=args.steps)
    # robosuite's repeated forwards per substep, computed as robosuite does (memobench/sim/forward_once.py)
    split_step = on_off_ratio(env, args.steps, lambda on: setattr(env._forward_once, "enabled", on))
    # the controller's update as the simulator package installs it (memobench/sim/fast_controller.py)
    fast_update = on_off_ratio(env, args.steps, lambda on: setattr(fast_controller, "ENABLED", on))
    # LIBERO's goal check after every step, which SimEnv switches off (memobench/sim/env.py)
    no_goal = on_off_ratio(env, args.steps, lambda on: skip_libero_goal_check(env.libero, on))
    spare_snapshot = snapshot_ratio(env, repeat=args.steps)
    agent = timed(lambda: env.render("agentview", 256), repeat=10)
    wrist = timed(lambda: env.render("wrist", 256), repeat=10)

    protocol = Protocol(horizon=args.steps, stabilization_steps=0, adapter_timeout=0)
    guard = AdapterGuard(NoopPolicy(), timeout=None)
    record = run_episode(task, plan, env, guard, protocol).record
    harness = record.timings["total"] / record.steps
    with_cameras = bare + (agent + wrist) / protocol.replan_steps

    print(f"task {task.id}, {args.steps} steps")
    print(f"env build: camera-free {build_free:.2f} s, with renderer {build_render:.2f} s")
    # camera-free envs are LIBERO's ControlEnv, without the renderer OffScreenRenderEnv forces on
    print(f"ratio env build camera-free / with renderer: {build_free / build_render:.3f}")
    print(f"reset (hard_reset=False): {reset * 1000:.1f} ms")
    print(f"bare LIBERO step: {bare * 1000:.2f} ms ({1 / bare:.0f} steps/s camera-free)")
    print(f"ratio step time mj_step1 + mj_step2 per substep / robosuite's three forwards: {split_step:.3f}")
    print(f"ratio step time fast controller update / the installed one: {fast_update:.3f}")
    print(f"ratio step time without LIBERO's goal check / with it: {no_goal:.3f}")
    print(f"ratio snapshot time into a dropped snapshot's mjData / into a new one: {spare_snapshot:.3f}")
    print(f"camera frame 256x256: agentview {agent * 1000:.0f} ms, wrist {wrist * 1000:.0f} ms")
    print(f"steps/s with both cameras at every query (replan 5): {1 / with_cameras:.0f}")
    print(f"harness step (noop policy, tracker, ledger-ready record): {harness * 1000:.2f} ms")
    print(f"ratio harness throughput / bare stepping: {bare / harness:.3f}")
    env.close()


if __name__ == "__main__":
    main()
