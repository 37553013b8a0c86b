"""Demonstrations with perturbed execution (``memobench collect --action-noise SIGMA``).

Why: the scripted experts repeat one path per layout, and the suite's layouts differ by about a
centimetre, so plain demonstrations show a learner nothing off that path. A network trained on
them drifts a few millimetres a step in closed loop and is soon where no demonstration went
(the failure of behaviour cloning known as covariate shift). Executing the expert's actions with
noise while recording the action the expert chose (DART, Laskey et al., 2017) fills the
neighbourhood of the path with states *and the expert's corrections from them*.

How: every executed action is the expert's action plus Gaussian noise of deviation ``sigma`` on
the six arm dimensions (position and rotation; the gripper command is left alone), clipped to
[-1, 1]. The expert is queried at every step (replan interval 1), so each label is the expert's
action in exactly the state the step started from, and it plans on from where the noise put the
arm. The noise comes from its own generator, spawned from the episode's, so the expert's own
draws are those of an unperturbed run and the same seed gives the same demo.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ARM_DIMS = 6  # OSC_POSE position and rotation; index 6 is the gripper


class PerturbedExecution:
    """Adapter wrapper around an expert: returns the first action of its chunk with noise, as a chunk
    of one (collection replans every step), and keeps the clean action.

    ``labels`` holds, per query since the last :meth:`reset`, the expert's own first action: one per
    executed step.
    """

    needs_images = False
    privileged = True

    def __init__(self, expert: Any, sigma: float) -> None:
        if not sigma > 0:
            raise ValueError(f"action noise must be positive, not {sigma}")
        self.expert, self.sigma = expert, float(sigma)
        self.labels: list[np.ndarray] = []
        self._noise = np.random.default_rng(0)

    def reset(self) -> None:
        self.expert.reset()
        self.labels = []

    def begin_episode(self, rng: np.random.Generator) -> None:
        self.expert.begin_episode(rng)
        self._noise = rng.spawn(1)[0]  # spawning draws nothing from rng

    def observe(self, obs: dict[str, Any]) -> None:
        self.expert.observe(obs)

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        if obs.get("cue"):  # the cue query: nothing runs, so no label and no noise drawn
            return np.array(self.expert.infer_actions(obs, prompt, resize_size), dtype=np.float64)[:1]
        clean = np.array(self.expert.infer_actions(obs, prompt, resize_size), dtype=np.float64)[0]  # a copy
        self.labels.append(clean)
        noisy = clean.copy()
        noisy[:ARM_DIMS] += self.sigma * self._noise.standard_normal(ARM_DIMS)
        return np.clip(noisy, -1.0, 1.0)[None]

    def finished(self) -> bool:
        return self.expert.finished()

    def close(self) -> None:
        self.expert.close()
