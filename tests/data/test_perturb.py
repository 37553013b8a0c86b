"""Perturbed collection (DART): noise on the arm only, the expert's own actions kept as labels,
the noise drawn from the episode's own generator, and a perturbed demo replaying from what ran."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.data.perturb import PerturbedExecution


class FixedExpert:
    """Returns the same chunk every query; counts its calls."""

    def __init__(self, chunk: np.ndarray) -> None:
        self.chunk, self.queries, self.rng = chunk, 0, None

    def reset(self) -> None:
        self.queries = 0

    def begin_episode(self, rng) -> None:
        self.rng = rng

    def infer_actions(self, obs, prompt, resize_size):
        self.queries += 1
        return self.chunk

    def finished(self) -> bool:
        return False

    def close(self) -> None:
        pass


def test_noise_moves_the_arm_dimensions_only_and_the_labels_are_the_experts_first_rows():
    chunk = np.tile([0.5, -0.5, 0.0, 0.1, 0.0, -0.1, 1.0], (50, 1))
    chunk[:, 0] = 1.0  # saturated: the noisy action must be clipped back into [-1, 1]
    wrapped = PerturbedExecution(FixedExpert(chunk), sigma=0.3)
    wrapped.begin_episode(np.random.default_rng(4))
    noisy = [wrapped.infer_actions({}, "", 224) for _ in range(10)]
    assert len(wrapped.labels) == 10 and all(np.array_equal(label, chunk[0]) for label in wrapped.labels)
    for out in noisy:
        assert out.shape == (1, 7) and np.abs(out).max() <= 1.0  # one action: collection replans every step
        assert out[0, 6] == chunk[0, 6]  # the gripper command is never perturbed
        assert np.abs(out[0, 1:6] - chunk[0, 1:6]).min() > 0  # every arm entry moved
    assert max(out[0, 0] for out in noisy) <= 1.0 and min(out[0, 0] for out in noisy) < 1.0
    assert not np.array_equal(noisy[0], noisy[1])
    wrapped.reset()
    assert wrapped.labels == []


def test_the_noise_is_seeded_and_leaves_the_experts_generator_untouched():
    chunk = np.zeros((50, 7))

    def first_action(seed: int) -> tuple[np.ndarray, float]:
        expert = FixedExpert(chunk)
        wrapped = PerturbedExecution(expert, sigma=0.2)
        wrapped.begin_episode(np.random.default_rng(seed))
        return wrapped.infer_actions({}, "", 224)[0], expert.rng.random()

    (a, draw_a), (b, draw_b), (c, _) = first_action(1), first_action(1), first_action(2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert draw_a == draw_b == np.random.default_rng(1).random()  # the expert draws as if unwrapped


def test_non_positive_noise_is_refused():
    with pytest.raises(ValueError, match="must be positive"):
        PerturbedExecution(FixedExpert(np.zeros((1, 7))), sigma=0.0)


@pytest.mark.sim
def test_a_perturbed_collection_stores_labels_replays_from_what_ran_and_cannot_be_mixed(tmp_path, monkeypatch):
    from memobench.core.seeding import episode_rng
    from memobench.core.suite import Suite
    from memobench.data.collect import CollectionConflict, collect_task
    from memobench.data.demo_file import read_task_file
    from memobench.data.validate import validate_dir
    from memobench.experts.model import ForwardModel
    from memobench.experts.policy import CHUNK

    model_steps = []
    monkeypatch.setattr(ForwardModel, "step", lambda self, action: model_steps.append(action))
    task = Suite.load().get("O01-cued-milk")
    result = collect_task(task, 1, tmp_path / "a", action_noise=0.15)
    assert result.kept == 1
    # At replan interval 1 the expert simulates ahead only on its first query (a whole chunk, all
    # but the last action); from then on it plans one action a query and never simulates it: the
    # next query re-syncs its model to the real state. This is the cost of a perturbed collection.
    assert len(model_steps) == CHUNK - 1
    attrs, (demo,) = read_task_file(result.path)
    assert attrs["action_noise"] == 0.15
    labels, executed = demo.arrays["actions"], demo.arrays["executed_actions"]
    assert labels.shape == executed.shape == (demo.length, 7)
    np.testing.assert_array_equal(labels[:, 6], executed[:, 6])
    assert np.abs(labels[:, :6] - executed[:, :6]).mean() > 0.05  # noise of 0.15, clipped at saturation
    (check,) = validate_dir(tmp_path / "a", tasks=[task.id], episodes=1)
    assert check.problems == [] and check.state_drift == 0.0

    # what ran is the labels plus the noise the episode's own generator gives (where not clipped)
    noise = episode_rng(demo.attrs["seed"], task.id, "policy").spawn(1)[0]
    want = np.stack([labels[t, :6] + 0.15 * noise.standard_normal(6) for t in range(demo.length)])
    inside = np.abs(want) < 1.0
    np.testing.assert_allclose(executed[:, :6][inside], want[inside])
    np.testing.assert_array_equal(executed[:, :6][~inside], np.sign(want[~inside]))
    with pytest.raises(CollectionConflict, match="action_noise 0.15, not 0.0"):
        collect_task(task, 2, tmp_path / "a")
