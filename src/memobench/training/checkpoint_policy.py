"""``--policy checkpoint``: a network trained by ``memobench train``, evaluated camera-free in ``state`` mode.

``--adapter-kwargs '{"path": "runs/train/bc-gru"}'`` names the training folder (its last
checkpoint is loaded). Each query the policy builds the state vector
(:func:`memobench.training.state.state_vector`) from the harness's snapshot of the scene,
in a private camera-free copy of the task's scene (as the scripted experts' forward model
does; the snapshot is only read), so it sees exactly what it was trained on: poses of
visible objects only. The cue reaches it through ``observe`` as robot states. One frame
enters the memory per query, so the memory's time step is the run's ``--replan-steps``
(trained at ``stride``, 5 by default; other intervals are a distribution shift, which is what
a replan sweep measures). An oracle-memory checkpoint must be evaluated with
``--memory-oracle`` at its text level: without it the prompt lacks its memory line and every
query fails with that message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from memobench.training.dataset import TIME_SCALE


class CheckpointPolicy:
    """The adapter (module docstring); built in each worker from ``path`` alone, so it pickles as a spec."""

    needs_images = False
    privileged = True  # reads the snapshot to build the state vector, visibility rule applied

    def __init__(self, path: str, embedder: str | None = None) -> None:
        import torch

        from memobench.training.checkpoint_files import last_checkpoint, load_texts, load_weights, read_config
        from memobench.training.embedding import EmbeddingCache
        from memobench.training.models import MemoryPolicy, PolicyConfig

        folder = Path(path)
        config = read_config(folder)
        checkpoint = last_checkpoint(folder)
        if config is None or checkpoint is None:
            raise ValueError(f"{folder}: not a training folder with a checkpoint (run memobench train first)")
        torch.set_num_threads(1)  # one per worker: workers are the parallelism
        self.settings = config["settings"]
        self.net = MemoryPolicy(PolicyConfig(**config["policy"])).eval()
        load_weights(checkpoint, self.net)
        texts, table = load_texts(checkpoint)
        self._embedder_name = embedder or self.settings["embedder"]
        self.cache = EmbeddingCache(None, texts, table)  # the encoder loads only for a text training never saw
        self.chunk_size = int(config["policy"]["chunk"])
        self._scene = SceneCopy()
        self.reset()

    def reset(self) -> None:
        self._cue: list[np.ndarray] = []
        self._rollout = None

    def observe(self, obs: dict[str, Any]) -> None:
        if obs.get("cue"):
            self._cue.append(np.asarray(obs["observation/state"], np.float32))

    def _prompt_vector(self, prompt: str):
        import torch

        if self.settings["oracle_memory"] and "\nMemory: " not in prompt:
            raise ValueError(
                "this checkpoint was trained with oracle memory: evaluate it with "
                f"--memory-oracle {self.settings['text_level']}"
            )
        if prompt not in self.cache.index and self.cache.embedder is None:
            from memobench.training.embedding import make_embedder

            self.cache.embedder = make_embedder(self._embedder_name)
        row = self.cache.ids([prompt])[0]  # may grow the table: index it afterwards
        return torch.from_numpy(self.cache.table[row])

    def _state(self, obs: dict[str, Any]) -> np.ndarray:
        return self._scene.vector(obs)

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        import torch

        from memobench.training.models import Rollout

        if self._rollout is None:
            stride = int(self.settings["stride"])
            cue = np.stack(self._cue)[::stride] if self._cue else np.zeros((0, 8), np.float32)
            self._rollout = Rollout(self.net, torch.from_numpy(cue))
        out = self._rollout.step(
            torch.from_numpy(self._state(obs)), self._prompt_vector(prompt), float(obs.get("step", 0)) / TIME_SCALE
        )
        return np.clip(out["actions"].numpy().astype(np.float64), -1.0, 1.0)

    def close(self) -> None:
        self._scene.close()


class SceneCopy:
    """A private camera-free copy of the task's scene that turns a harness snapshot into the state vector.

    Built from the task's first binding (the objects are the same for every binding; the snapshot
    carries the fixtures' placement), as the scripted experts' forward model is; the evaluation
    env is only read.
    """

    def __init__(self) -> None:
        self._envs: dict[str, Any] = {}

    def vector(self, obs: dict[str, Any]) -> np.ndarray:
        """The state vector of the scene in ``obs["privileged/snapshot"]`` (task ``obs["privileged/task"]``)."""
        import mujoco

        from memobench.core.bindings import all_bindings
        from memobench.sim.env import SimEnv
        from memobench.sim.world import WorldView
        from memobench.training.state import state_vector

        task = obs["privileged/task"]
        if task.id not in self._envs:
            self.close()
            env = SimEnv(task.bddl(all_bindings(task.spec)[0]), render=False)
            env.reset(0)
            self._envs = {task.id: (env, WorldView(env))}
        env, world = self._envs[task.id]
        env.restore(obs["privileged/snapshot"])
        # the stored state's body poses lag one substep (robosuite); featurising forwards too
        mujoco.mj_forward(env.sim.model._model, env.sim.data._data)
        return state_vector(env, world, np.asarray(obs["observation/state"], np.float32))

    def close(self) -> None:
        for env, _ in self._envs.values():
            env.close()
        self._envs = {}
