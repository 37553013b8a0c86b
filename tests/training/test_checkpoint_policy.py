"""``--policy checkpoint``: a trained folder loads as a built-in adapter and acts as the trained network.

The state vector comes from the simulator in a real run (tests/training/test_state_sim.py checks it);
here it is replaced by made-up vectors so no simulator is built.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import write_dataset  # noqa: E402

from memobench.data.state_features import STATE_DIM  # noqa: E402
from memobench.policies.loader import policy_factory  # noqa: E402
from memobench.training.checkpoint_policy import CheckpointPolicy  # noqa: E402
from memobench.training.embedding import HashEmbedder  # noqa: E402
from memobench.training.trainer import TrainSettings, train  # noqa: E402


def trained(tmp_path, **changes):
    data = tmp_path / "data"
    write_dataset(data, data / "state-features")
    settings = TrainSettings(
        **({"policy": "bc-gru", "steps": 2, "batch_size": 2, "hidden": 16, "chunk": 5, "embedder": "hash"} | changes)
    )
    train(settings, data, tmp_path / "out", embedder=HashEmbedder(32))
    return tmp_path / "out"


def test_builds_by_name_in_a_fresh_factory_and_acts_as_the_network(tmp_path) -> None:
    out = trained(tmp_path)
    policy = policy_factory({"name": "checkpoint", "adapter_kwargs": {"path": str(out)}})()
    assert isinstance(policy, CheckpointPolicy) and policy.chunk_size == 5 and policy.needs_images is False
    rng = np.random.default_rng(0)
    states = rng.standard_normal((4, STATE_DIM)).astype(np.float32)
    cue = rng.standard_normal((12, 8)).astype(np.float32)
    # "t" is this test's own key (the harness tells a policy no step): which state the scene shows
    policy._state = lambda obs: states[obs["t"] // 5]
    policy.reset()
    for frame in cue:
        policy.observe({"observation/state": frame, "cue": True})
    # the cue query, whose chunk the harness discards: zeros, and the memory takes no frame from it
    np.testing.assert_array_equal(policy.infer_actions({"t": 0, "cue": True}, "do task 0", 224), np.zeros((5, 7)))
    chunks = [policy.infer_actions({"t": 5 * i}, "do task 0", 224) for i in range(4)]
    assert all(c.shape == (5, 7) and np.all(np.abs(c) <= 1) for c in chunks)

    prompt = torch.from_numpy(policy.cache.table[policy.cache.index["do task 0"]])
    whole = policy.net(
        torch.from_numpy(states)[None],
        prompt.expand(1, 4, -1),
        torch.from_numpy(cue[::5])[None],
        torch.tensor([3]),
    )["actions"][0]
    np.testing.assert_allclose(np.stack(chunks), np.clip(whole.detach().numpy(), -1, 1), atol=1e-5)

    policy.reset()  # a new episode forgets the last one
    policy._state = lambda obs: states[0]
    again = policy.infer_actions({"t": 0}, "do task 0", 224)
    assert not np.allclose(again, chunks[0])  # no cue this time: the memory starts elsewhere


def test_the_memoryless_policy_has_no_clock(tmp_path) -> None:
    """bc-mlp answers the same observation and prompt alike whenever it comes: no step count reaches it
    (a clock is memory: on demos of one speed it would replay the plan by the time)."""
    policy = CheckpointPolicy(str(trained(tmp_path, policy="bc-mlp")))
    state = np.random.default_rng(1).standard_normal(STATE_DIM).astype(np.float32)
    policy._state = lambda obs: state
    early, late = (policy.infer_actions({"t": t}, "do task 0", 224) for t in (0, 900))
    np.testing.assert_array_equal(early, late)


def test_an_unseen_prompt_is_embedded_with_the_training_encoder(tmp_path) -> None:
    policy = CheckpointPolicy(str(trained(tmp_path)))
    policy._state = lambda obs: np.zeros(STATE_DIM, np.float32)
    before = len(policy.cache.texts)
    policy.infer_actions({}, "a prompt never trained on", 224)
    assert len(policy.cache.texts) == before + 1


def test_an_oracle_memory_checkpoint_needs_the_oracle_prompt(tmp_path) -> None:
    policy = CheckpointPolicy(str(trained(tmp_path, oracle_memory=True, text_level="fine")))
    policy._state = lambda obs: np.zeros(STATE_DIM, np.float32)
    with pytest.raises(ValueError, match="--memory-oracle fine"):
        policy.infer_actions({}, "do task 0", 224)
    policy.infer_actions({}, "do task 0\nMemory: nothing done yet.", 224)


def test_a_folder_without_a_checkpoint_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="not a training folder"):
        CheckpointPolicy(str(tmp_path))
