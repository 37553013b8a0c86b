"""Training items: frames every stride, padded chunks, memory texts and the harness's oracle prompt."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import CHECKPOINTS, write_dataset  # noqa: E402

from memobench.core.oracle import oracle_prompt  # noqa: E402
from memobench.training.dataset import BatchSource, DataOptions, collate, episode_item, index_demos  # noqa: E402

LENGTH = 12


def checkpoints(first: int | None, second: int | None) -> list[dict]:
    return [dict(cp, key_frame=k) for cp, k in zip(CHECKPOINTS, (first, second), strict=True)]


def item(options: DataOptions, phase: int = 0, permutation=None, key_frames=(3, 8)):
    actions = np.arange(LENGTH * 7, dtype=float).reshape(LENGTH, 7)
    state = np.arange(LENGTH, dtype=np.float32)[:, None] * np.ones((1, 4), np.float32)
    cue = np.arange(9, dtype=np.float32)[:, None] * np.ones((1, 8), np.float32)
    return episode_item(actions, state, cue, checkpoints(*key_frames), "stack it", options, phase, permutation)


def test_frames_every_stride_from_the_phase_with_padded_action_chunks() -> None:
    it = item(DataOptions(stride=4, chunk=5), phase=1)
    assert it.steps.tolist() == [1, 5, 9]
    assert it.state[:, 0].tolist() == [1, 5, 9]
    assert it.actions[0, :, 0].tolist() == [7.0 * t for t in range(1, 6)]
    assert it.action_mask[2].tolist() == [True, True, True, False, False]  # steps 9-11 exist, 12-13 do not
    assert np.all(it.actions[2, 3:] == 0)
    assert it.cue[:, 0].tolist() == [0, 4, 8]


def test_memory_text_is_the_active_checkpoint_at_the_level() -> None:
    # checkpoint 0 completed by action 3 (done from frame 4 on), checkpoint 1 by action 8
    it = item(DataOptions(stride=1, chunk=2, text_level="fine"))
    expected = ["first fine"] * 4 + ["second fine"] * 8  # after all are done: the last one
    assert it.memory_texts == expected
    assert it.prompts == ["stack it"] * LENGTH


def test_oracle_memory_prompts_are_the_harness_prompt_word_for_word() -> None:
    it = item(DataOptions(stride=1, chunk=2, text_level="coarse", oracle_memory=True))
    assert it.prompts[3] == oracle_prompt("stack it", [])
    assert it.prompts[4] == oracle_prompt("stack it", ["first coarse"]) == "stack it\nMemory: first coarse."
    assert it.prompts[9] == oracle_prompt("stack it", ["first coarse", "second coarse"])


def test_shuffled_subgoals_swap_the_checkpoints_texts() -> None:
    plain = item(DataOptions(stride=1, chunk=2, oracle_memory=True))
    swapped = item(DataOptions(stride=1, chunk=2, oracle_memory=True), permutation=np.array([1, 0]))
    assert swapped.memory_texts == [
        t.replace("first", "X").replace("second", "first").replace("X", "second") for t in plain.memory_texts
    ]
    assert swapped.prompts[4].endswith("Memory: second intermediate.")


def test_a_demo_whose_features_do_not_match_is_refused() -> None:
    with pytest.raises(ValueError, match="featurise it again"):
        episode_item(np.zeros((5, 7)), np.zeros((4, 3)), np.zeros((0, 8)), checkpoints(1, 2), "x", DataOptions())


def test_batches_are_a_function_of_seed_and_index_and_pad_with_masks(tmp_path) -> None:
    write_dataset(tmp_path / "data", tmp_path / "features")
    refs = index_demos(tmp_path / "data", tmp_path / "features")
    assert len(refs) == 4 and {r.instruction for r in refs} == {"do task 0", "do task 1"}
    source = BatchSource(refs, DataOptions(stride=5, chunk=6), batch_size=3, seed=1)
    a, b = source.items(4), source.items(4)
    assert [x.steps.tolist() for x in a] == [x.steps.tolist() for x in b]
    assert all(np.array_equal(x.actions, y.actions) for x, y in zip(a, b, strict=True))
    ids = [np.zeros(len(x.steps), np.int64) for x in a]
    batch = collate(a, ids, ids)
    frames = max(len(x.steps) for x in a)
    assert batch["states"].shape == (3, frames, a[0].state.shape[1])
    assert batch["frame_mask"].sum().item() == sum(len(x.steps) for x in a)
    assert batch["actions"].shape == (3, frames, 6, 7)
    source.close()
