"""The expert's forward model: a private copy of the task's scene, synced to the real one.

At each query the policy copies the evaluation env's exact state into its
model, runs its closed-loop plan there for as many steps as it will be
executed, and returns those actions. The simulator is deterministic and the
copy exact, so the chunk reproduces the closed-loop behaviour whatever the
replan interval. The evaluation env is only read (a snapshot), never written.

The model is built from the task's first binding: the scene's objects are the
same for every binding, and the model never learns which binding the episode
drew (the copied state does not say, the expert has to remember it).
"""

from __future__ import annotations

from memobench.core.bindings import all_bindings
from memobench.core.suite import Task
from memobench.experts.scene import Scene
from memobench.sim.env import SimEnv, Snapshot


class ForwardModel:
    """A camera-free env of ``task`` that mirrors a given snapshot."""

    def __init__(self, task: Task):
        self.env = SimEnv(task.bddl(all_bindings(task.spec)[0]), render=False)
        self.env.reset(0)
        self.scene = Scene(self.env)

    def sync(self, snapshot: Snapshot) -> None:
        self.env.restore(snapshot)

    def step(self, action) -> None:
        self.env.step(action)

    def close(self) -> None:
        self.env.close()
