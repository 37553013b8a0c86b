"""``--policy checkpoint``: a network trained by ``memobench train`` (camera-free in ``state`` mode).

``--adapter-kwargs '{"path": "runs/train/bc-gru"}'`` names the training folder (its last
checkpoint is loaded). Each query the policy builds the state vector
(:func:`memobench.data.state_features.state_vector`) from the harness's snapshot of the scene,
in a private camera-free copy of the task's scene (as the scripted experts' forward model
does; the snapshot is only read), so it sees exactly what it was trained on: poses of
visible objects only. The cue reaches it through ``observe`` as robot states (the cue query,
whose chunk the harness discards, is answered with zeros and leaves the memory as it is); the rollout
does not (``observe_rollout`` is False), since one frame enters the memory per query, so the
memory's time step is the run's ``--replan-steps`` (trained at ``stride``, 5 by default; other
intervals are a distribution shift, which is what a replan sweep measures). An oracle-memory
checkpoint must be evaluated with ``--memory-oracle`` at its text level: without it the prompt
lacks its memory line and every query fails with that message.

An ``rgb`` checkpoint is not privileged: it asks for images (``needs_images``) and reads the robot
state and the two images of the adapter contract (``observation/image``, ``observation/wrist_image``),
and the cue's frames through ``observe`` (``observe_images``). The harness draws them at the camera
size and resizes them to ``--resize-size`` as ``data render`` did for training, so they are the
trained pixels only at the size the demos were rendered at: another ``--resize-size`` fails each
query, naming the size to use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class CheckpointPolicy:
    """The adapter (module docstring); built in each worker from ``path`` alone, so it pickles as a spec."""

    # state mode (an rgb checkpoint sets its own in __init__): it reads the snapshot to build the
    # state vector, visibility rule applied, and needs no camera
    needs_images = False
    privileged = True
    # its memory takes one frame per query, from the query's own observation: ``observe`` is for
    # the cue only, and declining the rollout spares an rgb checkpoint two renders every step
    observe_rollout = False

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
        self.image_size = self.net.config.image_size  # 0 in state mode
        self.needs_images = self.observe_images = self.image_size > 0
        self.privileged = not self.needs_images
        load_weights(checkpoint, self.net)
        texts, table = load_texts(checkpoint)
        self._embedder_name = embedder or self.settings["embedder"]
        self.cache = EmbeddingCache(None, texts, table)  # the encoder loads only for a text training never saw
        self.chunk_size = int(config["policy"]["chunk"])
        self._scene = SceneCopy()
        self.reset()

    def reset(self) -> None:
        self._cue: list[np.ndarray] = []
        self._cue_images: list[np.ndarray] = []
        self._rollout = None

    def observe(self, obs: dict[str, Any]) -> None:
        if obs.get("cue"):
            self._cue.append(np.asarray(obs["observation/state"], np.float32))
            if self.image_size:
                self._cue_images.append(self._images(obs))

    def _images(self, obs: dict[str, Any]) -> np.ndarray:
        """The two cameras' frames [2, S, S, 3] uint8, refused unless at the trained size."""
        frames = []
        for key in ("observation/image", "observation/wrist_image"):
            frame = np.asarray(obs[key])
            if frame.shape != (self.image_size, self.image_size, 3):
                raise ValueError(
                    f"this checkpoint was trained on {self.image_size} px frames; {key} is {frame.shape}: "
                    f"evaluate it with --resize-size {self.image_size}"
                )
            frames.append(frame.astype(np.uint8))
        return np.stack(frames)

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
        if self.image_size:
            return np.asarray(obs["observation/state"], np.float32)
        return self._scene.vector(obs)

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        import torch

        from memobench.training.models import Rollout

        if obs.get("cue"):  # the cue query, whose chunk is discarded: the memory takes no frame from it
            return np.zeros((self.chunk_size, 7))

        if self._rollout is None:
            stride = int(self.settings["stride"])
            cue = np.stack(self._cue)[::stride] if self._cue else np.zeros((0, 8), np.float32)
            cue_images = None
            if self.image_size:
                empty = np.zeros((0, 2, self.image_size, self.image_size, 3), np.uint8)
                stacked = np.stack(self._cue_images)[::stride] if self._cue_images else empty
                cue_images = torch.from_numpy(stacked)
            self._rollout = Rollout(self.net, torch.from_numpy(cue), cue_images)
        images = torch.from_numpy(self._images(obs)) if self.image_size else None
        out = self._rollout.step(
            torch.from_numpy(self._state(obs)),
            self._prompt_vector(prompt),
            images,
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
        from memobench.data.state_features import state_vector
        from memobench.sim.env import SimEnv
        from memobench.sim.world import WorldView

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
