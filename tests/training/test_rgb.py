"""``--obs rgb``: both cameras' rendered frames (and the cue's) feed a shared CNN; the checkpoint asks for images.

Synthetic demo files carry random frames where ``memobench data render`` puts them, so no camera is needed.
"""

from __future__ import annotations

import h5py
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import write_dataset  # noqa: E402

from memobench.training.checkpoint_policy import CheckpointPolicy  # noqa: E402
from memobench.training.dataset import BatchSource, DataOptions, index_demos  # noqa: E402
from memobench.training.embedding import HashEmbedder  # noqa: E402
from memobench.training.models import POLICIES, MemoryPolicy, PolicyConfig, Rollout  # noqa: E402
from memobench.training.trainer import TrainSettings, train  # noqa: E402

SIDE = 16


@pytest.fixture
def rendered(tmp_path):
    write_dataset(tmp_path / "data", tmp_path / "features", image_size=SIDE)
    return tmp_path / "data"


def settings(**changes) -> TrainSettings:
    base = dict(policy="bc-gru", obs="rgb", steps=2, batch_size=2, hidden=16, chunk=4, embedder="hash")
    return TrainSettings(**(base | changes))


def test_items_hold_both_cameras_at_the_frames_used_and_the_cue_every_stride(rendered) -> None:
    options = DataOptions(stride=5, chunk=4, obs="rgb")
    source = BatchSource(index_demos(rendered, rendered / "unused"), options, batch_size=4, seed=3)
    items = source.items(0)
    picks = np.random.default_rng(np.random.SeedSequence([3, 0])).integers(4, size=4)
    source.close()
    refs = index_demos(rendered, rendered / "unused")
    for item, pick in zip(items, picks, strict=True):
        with h5py.File(refs[pick].demo_file) as f:
            group = f["data"][refs[pick].name]
            np.testing.assert_array_equal(item.state, group["robot_states"][()][item.steps])
            for camera, key in enumerate(("agentview_rgb", "eye_in_hand_rgb")):
                np.testing.assert_array_equal(item.images[:, camera], group[f"obs/{key}"][()][item.steps])
                np.testing.assert_array_equal(item.cue_images[:, camera], group[f"cue/{key}"][()][::5])
        assert item.images.dtype == np.uint8 and item.images.shape[1:] == (2, SIDE, SIDE, 3)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_trains_on_frames(tmp_path, rendered, policy) -> None:
    result = train(settings(policy=policy, align="framewise"), rendered, tmp_path / "out", embedder=HashEmbedder(8))
    assert result["step"] == 2 and np.isfinite(result["loss"])
    assert not (rendered / "state-features").exists()  # rgb mode never needs the simulator's features


def test_demos_without_frames_are_refused_naming_the_render_step(tmp_path) -> None:
    write_dataset(tmp_path / "data", tmp_path / "data" / "state-features")
    with pytest.raises(ValueError, match="T01-synthetic.hdf5: no camera frames .* memobench data render"):
        train(settings(), tmp_path / "data", tmp_path / "out", embedder=HashEmbedder(8))


@pytest.mark.parametrize("kind", ["bc-gru", "bc-transformer"])
def test_rgb_rollout_equals_the_sequence_forward_and_sees_the_cue_frames(kind: str) -> None:
    torch.manual_seed(0)
    net = MemoryPolicy(PolicyConfig(kind, 8, 6, hidden=16, chunk=3, window=3, image_size=SIDE)).eval()
    frames, cue_frames = 7, 4
    states, prompts = torch.randn(1, frames, 8), torch.randn(1, frames, 6)
    images = torch.randint(0, 256, (1, frames, 2, SIDE, SIDE, 3), dtype=torch.uint8)
    cue, cue_images = torch.randn(1, cue_frames, 8), torch.randint(0, 256, (1, cue_frames, 2, SIDE, SIDE, 3))
    cue_images = cue_images.to(torch.uint8)
    with torch.no_grad():
        whole = net(states, prompts, cue, torch.tensor([cue_frames]), images, cue_images)["actions"][0]
        other_cue = net(states, prompts, cue, torch.tensor([cue_frames]), images, 255 - cue_images)
    rollout = Rollout(net, cue[0], cue_images[0])
    stepped = torch.stack([rollout.step(states[0, t], prompts[0, t], images[0, t])["actions"] for t in range(7)])
    torch.testing.assert_close(stepped, whole, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(other_cue["actions"][0], whole)  # the cue's pictures reach the memory


def test_an_rgb_network_without_images_is_refused() -> None:
    net = MemoryPolicy(PolicyConfig("bc-mlp", 8, 6, hidden=16, chunk=3, image_size=SIDE))
    with pytest.raises(ValueError, match="needs both cameras' images"):
        net(
            torch.zeros(1, 2, 8),
            torch.zeros(1, 2, 6),
            torch.zeros(1, 1, 8),
            torch.tensor([0]),
        )


def test_the_checkpoint_asks_for_images_at_the_trained_size_and_acts_as_the_network(tmp_path, rendered) -> None:
    train(settings(policy="bc-gru"), rendered, tmp_path / "out", embedder=HashEmbedder(32))  # "hash" is 32-d
    policy = CheckpointPolicy(str(tmp_path / "out"))
    assert policy.needs_images and policy.observe_images and not policy.privileged and policy.image_size == SIDE
    rng = np.random.default_rng(0)

    def obs(step: int, size: int = SIDE, **extra) -> dict:
        frames = rng.integers(0, 256, (2, size, size, 3), dtype=np.uint8)
        state = rng.standard_normal(8).astype(np.float32)
        return (
            {"observation/state": state, "observation/image": frames[0], "observation/wrist_image": frames[1]}
            | {"step": step}
            | extra
        )

    cue = [obs(-1, cue=True) for _ in range(6)]
    queries = [obs(5 * i) for i in range(3)]
    policy.reset()
    for o in cue:
        policy.observe(o)
    chunks = np.stack([policy.infer_actions(o, "do task 0", SIDE) for o in queries])

    def stack(observations, key):
        return torch.from_numpy(np.stack([o[key] for o in observations]))[None]

    prompt = torch.from_numpy(policy.cache.table[policy.cache.index["do task 0"]]).expand(1, 3, -1)
    whole = policy.net(
        stack(queries, "observation/state"),
        prompt,
        stack(cue, "observation/state")[:, ::5],
        torch.tensor([2]),
        torch.stack([stack(queries, "observation/image"), stack(queries, "observation/wrist_image")], dim=2),
        torch.stack([stack(cue, "observation/image"), stack(cue, "observation/wrist_image")], dim=2)[:, ::5],
    )["actions"][0]
    np.testing.assert_allclose(chunks, np.clip(whole.detach().numpy(), -1, 1), atol=1e-5)

    policy.reset()
    with pytest.raises(ValueError, match=f"trained on {SIDE} px frames.*--resize-size {SIDE}$"):
        policy.infer_actions(obs(0, size=224), "do task 0", 224)


def test_resuming_on_frames_of_another_size_is_refused(tmp_path, rendered) -> None:
    train(settings(), rendered, tmp_path / "out", embedder=HashEmbedder(8))
    other = tmp_path / "other"
    write_dataset(other, tmp_path / "features", image_size=24)
    with pytest.raises(ValueError, match="^the network's image_size was 16 in this run folder, now 24"):
        train(settings(steps=4), other, tmp_path / "out", embedder=HashEmbedder(8))
