"""The scripted expert's cost per executed step, as a ratio to a no-op policy's on the same task.

The expert plans in a forward model (a second env synced to the real one at each query), so
an expert episode costs more than stepping alone; collection runs it at replan interval 1
and certification at the protocol's 5. Both runs are made in this
process one after the other, over the same number of steps, so machine noise moves both alike.

    .venv/bin/python benchmarks/expert_speed.py [--task T01] [--replan 1,5]

Prints, per interval, seconds per step of the expert's episode and of a no-op episode of as
many steps, and their ratio (1.0 would be a free expert).
"""

from __future__ import annotations

import argparse
import time

from memobench.core.suite import Suite
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.experts.policy import ExpertPolicy
from memobench.policies.adapter import AdapterGuard
from memobench.policies.builtin import NoopPolicy
from memobench.sim.env import SimEnv


def per_step(task, plan, env, policy, protocol) -> tuple[float, int]:
    """Seconds per executed step of one episode, and its steps (the forward model is built before timing)."""
    start = time.perf_counter()
    record = run_episode(task, plan, env, AdapterGuard(policy, timeout=None), protocol).record
    return (time.perf_counter() - start) / record.steps, record.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="T01")
    parser.add_argument("--replan", default="1,5", help="replan intervals, comma-separated")
    args = parser.parse_args()
    task = Suite.load().get(args.task)
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    expert = ExpertPolicy()
    expert.prepare(task)  # the forward model is built outside the timed runs
    try:
        print(f"task {task.id}")
        for k in (int(v) for v in args.replan.split(",")):
            protocol = Protocol(replan_steps=k, adapter_timeout=0)
            expert_s, steps = per_step(task, plan, env, expert, protocol)
            noop_s, _ = per_step(task, plan, env, NoopPolicy(), protocol.model_copy(update={"horizon": steps}))
            print(
                f"replan {k}: expert {1000 * expert_s:.1f} ms/step over {steps} steps, "
                f"no-op {1000 * noop_s:.1f} ms/step; ratio {expert_s / noop_s:.2f}"
            )
    finally:
        expert.close()
        env.close()


if __name__ == "__main__":
    main()
