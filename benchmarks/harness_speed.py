"""Evaluation speed: the harness against a naive LIBERO loop, worker scaling, and memory.

Every number that matters is a ratio of two runs made in this process (or its
workers) one after the other, so a noisy machine moves both sides alike.

    .venv/bin/python benchmarks/harness_speed.py naive   [--episodes 3] [--horizon 150]
    .venv/bin/python benchmarks/harness_speed.py scaling [--episodes 16] [--horizon 600]
    .venv/bin/python benchmarks/harness_speed.py memory  [--episodes 100] [--horizon 60]

naive:   episodes/hour of a loop as LIBERO's own evaluation scripts write it
         (a new env per episode with a hard reset, both 256x256 cameras rendered
         at every control step, the policy queried every 5 steps) against the
         harness on the same task, policy (noop) and seeds: camera-free, and
         with the policy's two images rendered at each query. Target >= 3x.
scaling: episodes/hour with 2 local workers over 1. Target >= 1.8x on 2 cores (both
         sides pay worker start-up and env builds: short runs understate it).
memory:  peak RSS of a worker (one process running the episodes), and its
         growth from episode 10 to the last. Target growth < 10%.
(The harness's per-step overhead over bare stepping: benchmarks/sim_costs.py.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from memobench.core.suite import Suite
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.evaluation.run_events import RunEvents
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.builtin import NoopPolicy

TASK = "T03-check-all-drawers"
CAMERA_SIZE = 256


class _NoopWithImages(NoopPolicy):
    needs_images = True


def timed_run(
    task, episodes: int, horizon: int | None, policy: dict, adapter, workers: int = 0, resize_size: int = 224
):
    """Seconds for ``episodes`` episodes of ``task`` through :func:`evaluate` (``workers`` 0: in this
    process; images, if the adapter asks for them, at ``resize_size``), and the run's ledger records."""
    with tempfile.TemporaryDirectory() as out:
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=episodes,
            out_root=Path(out),
            protocol=Protocol(horizon=horizon, resize_size=resize_size, adapter_timeout=0),
            policy=policy,
            workers=workers,
        )
        start = time.perf_counter()
        evaluate(request, adapter)
        seconds = time.perf_counter() - start
        records = [json.loads(line) for line in (Path(out) / "ledger.jsonl").read_text().splitlines()]
    return seconds, records


def run_harness(task, episodes: int, horizon: int, policy: str = "noop", workers: int = 0, adapter=None) -> float:
    """Seconds for ``episodes`` episodes of ``task`` through :func:`evaluate` (``workers`` 0: in this process)."""
    seconds, _ = timed_run(
        task, episodes, horizon, {"name": policy, "adapter_kwargs": {}}, adapter or NoopPolicy(), workers
    )
    return seconds


def run_naive(task, episodes: int, horizon: int, replan: int = 5) -> float:
    """Seconds for the same episodes in the loop LIBERO's example evaluation scripts use."""
    from memobench.sim.env import CAMERAS, _import_libero, _quiet, scoped_global_numpy_seed

    env_cls = _import_libero()
    policy = NoopPolicy()
    start = time.perf_counter()
    for e in range(episodes):
        plan = plan_episode(task, e, 7)
        with tempfile.NamedTemporaryFile("w", suffix=".bddl") as f:
            f.write(task.bddl(plan.binding))
            f.flush()
            with _quiet():
                env = env_cls(
                    bddl_file_name=f.name,
                    camera_heights=CAMERA_SIZE,
                    camera_widths=CAMERA_SIZE,
                    camera_names=list(CAMERAS.values()),
                    hard_reset=True,
                    ignore_done=True,
                    horizon=10**9,
                )
                with scoped_global_numpy_seed(plan.layout_seed):
                    obs = env.reset()
        for _ in range(10):  # the protocol's stabilisation steps
            obs, *_ = env.step(np.zeros(7))
        queue: list = []
        for _ in range(horizon):
            if not queue:
                images = [obs[f"{camera}_image"] for camera in CAMERAS.values()]
                assert images[0].shape == (CAMERA_SIZE, CAMERA_SIZE, 3)
                queue = list(policy.infer_actions(obs, task.spec.instruction, 224)[:replan])
            obs, *_ = env.step(queue.pop(0))
        env.close()
    return time.perf_counter() - start


def per_hour(episodes: int, seconds: float) -> float:
    return episodes * 3600 / seconds


def naive(args) -> None:
    task = Suite.load().get(TASK)
    n, h = args.episodes, args.horizon
    naive_s = run_naive(task, n, h)
    free_s = run_harness(task, n, h)
    images_s = run_harness(task, n, h, adapter=_NoopWithImages())
    print(f"{task.id}, noop policy, {n} episodes x {h} steps, replan 5, cameras {CAMERA_SIZE}x{CAMERA_SIZE}")
    print(f"naive LIBERO loop           : {per_hour(n, naive_s):8.0f} episodes/h ({naive_s:.1f} s)")
    print(
        f"harness, policy sees images : {per_hour(n, images_s):8.0f} episodes/h ({images_s:.1f} s)"
        f"  ratio {naive_s / images_s:.2f}x"
    )
    print(
        f"harness, camera-free        : {per_hour(n, free_s):8.0f} episodes/h ({free_s:.1f} s)"
        f"  ratio {naive_s / free_s:.2f}x"
    )


def scaling(args) -> None:
    task = Suite.load().get(TASK)
    n, h = args.episodes, args.horizon
    # both sides pay for spawning workers: 1 worker runs in a pool too
    one = run_harness(task, n, h, workers=1)
    two = run_harness(task, n, h, workers=2)
    print(f"{task.id}, noop policy, {n} episodes x {h} steps, camera-free, local worker processes")
    print(f"1 worker : {per_hour(n, one):8.0f} episodes/h ({one:.1f} s)")
    print(f"2 workers: {per_hour(n, two):8.0f} episodes/h ({two:.1f} s)  speed-up {one / two:.2f}x")


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory(args) -> None:
    task = Suite.load().get(TASK)
    samples: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as out:
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=args.episodes,
            out_root=Path(out),
            protocol=Protocol(horizon=args.horizon, adapter_timeout=0),
            policy={"name": "expert", "adapter_kwargs": {}},
        )
        from memobench.policies.loader import build_adapter, builtin_spec

        class Sampler(RunEvents):
            def episode_finished(self, record) -> None:
                samples[len(samples) + 1] = rss_mb()

        evaluate(request, build_adapter(builtin_spec("expert")), Sampler())
    last = max(samples)
    growth = (samples[last] - samples[10]) / samples[10]
    print(f"{task.id}, expert policy (its forward model included), {last} episodes x {args.horizon} steps")
    print(f"RSS after episode 1: {samples[1]:.0f} MB, 10: {samples[10]:.0f} MB, {last}: {samples[last]:.0f} MB")
    print(f"growth from episode 10 to {last}: {growth:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for name, episodes, horizon in (("naive", 3, 150), ("scaling", 16, 600), ("memory", 100, 60)):
        p = sub.add_parser(name)
        p.add_argument("--episodes", type=int, default=episodes)
        p.add_argument("--horizon", type=int, default=horizon)
    args = parser.parse_args()
    {"naive": naive, "scaling": scaling, "memory": memory}[args.what](args)


if __name__ == "__main__":
    main()
