"""The three policies: shapes, causality, what each remembers, and step-by-step evaluation = training's forward."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from memobench.training.models import POLICIES, MemoryPolicy, PolicyConfig, Rollout  # noqa: E402

T = 11


def run(net, states, prompts, cue):
    return net(states, prompts, cue, torch.tensor([cue.shape[1]]))


def inputs(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(1, T, 10, generator=g),
        torch.randn(1, T, 6, generator=g),
        torch.randn(1, 4, 8, generator=g),
    )


def net_of(kind: str, memory_input: str = "all") -> MemoryPolicy:
    torch.manual_seed(0)
    config = PolicyConfig(kind, state_dim=10, text_dim=6, hidden=16, chunk=3, window=3, memory_input=memory_input)
    return MemoryPolicy(config).eval()


@pytest.mark.parametrize("kind", POLICIES)
def test_outputs_have_the_documented_shapes(kind: str) -> None:
    out = run(net_of(kind), *inputs())
    assert out["actions"].shape == (1, T, 3, 7)
    assert out["memory"].shape == out["frames"].shape == (1, T, 16)
    assert out["memory_text"].shape == out["frame_text"].shape == (1, T, 6)


@pytest.mark.parametrize("kind", POLICIES)
def test_a_frame_never_sees_the_future(kind: str) -> None:
    net = net_of(kind)
    states, prompts, cue = inputs()
    changed = states.clone()
    changed[0, 7:] += 5.0
    a, b = run(net, states, prompts, cue), run(net, changed, prompts, cue)
    torch.testing.assert_close(a["actions"][0, :7], b["actions"][0, :7])
    assert not torch.allclose(a["actions"][0, 7], b["actions"][0, 7])


@pytest.mark.parametrize(("kind", "remembers"), [("bc-mlp", False), ("bc-gru", True), ("bc-transformer", True)])
def test_only_memory_policies_depend_on_the_past_and_the_cue(kind: str, remembers: bool) -> None:
    net = net_of(kind)
    states, prompts, cue = inputs()
    past = states.clone()
    past[0, 8] += 5.0  # two frames back: inside the transformer's window
    other_cue = cue + 1.0
    last = run(net, states, prompts, cue)["actions"][0, -1]
    assert torch.allclose(last, run(net, past, prompts, cue)["actions"][0, -1]) != remembers
    assert torch.allclose(last, run(net, states, prompts, other_cue)["actions"][0, -1]) != remembers


def test_the_transformer_forgets_what_left_its_reach() -> None:
    net = net_of("bc-transformer")  # window 3, 2 layers: reaches 4 frames back
    states, prompts, cue = inputs()
    early = states.clone()
    early[0, 0] += 5.0
    torch.testing.assert_close(
        run(net, states, prompts, cue)["actions"][0, -1], run(net, early, prompts, cue)["actions"][0, -1]
    )


def test_the_transformer_has_no_clock_but_knows_the_order_of_its_frames() -> None:
    net = net_of("bc-transformer")  # reaches 4 frames back
    states, prompts, cue = inputs()
    # Five other frames before the same history: the frames whose reach the new ones miss act alike.
    g = torch.Generator().manual_seed(9)
    later = run(
        net, torch.cat([torch.randn(1, 5, 10, generator=g), states], 1), torch.cat([prompts[:, :5], prompts], 1), cue
    )
    torch.testing.assert_close(later["actions"][0, 5 + 4 :], run(net, states, prompts, cue)["actions"][0, 4:])
    swapped = states.clone()
    swapped[0, [-2, -3]] = states[0, [-3, -2]]  # the last frame's two predecessors in the other order
    assert not torch.allclose(
        run(net, states, prompts, cue)["actions"][0, -1], run(net, swapped, prompts, cue)["actions"][0, -1]
    )


@pytest.mark.parametrize("memory_input", ["all", "scene"])
@pytest.mark.parametrize("kind", POLICIES)
def test_step_by_step_rollout_equals_the_sequence_forward(kind: str, memory_input: str) -> None:
    net = net_of(kind, memory_input)
    states, prompts, cue = inputs(3)
    whole = run(net, states, prompts, cue)
    rollout = Rollout(net, cue[0])
    for t in range(T):
        step = rollout.step(states[0, t], prompts[0, t])
        torch.testing.assert_close(step["actions"], whole["actions"][0, t], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(step["memory"], whole["memory"][0, t], atol=1e-5, rtol=1e-5)


def test_the_default_networks_are_small() -> None:
    from memobench.data.state_features import STATE_DIM

    sizes = {k: sum(p.numel() for p in MemoryPolicy(PolicyConfig(k, STATE_DIM, 384)).parameters()) for k in POLICIES}
    assert all(n < 1_000_000 for n in sizes.values()), sizes


@pytest.mark.parametrize("kind", ["bc-gru", "bc-transformer"])
def test_states_and_the_cue_are_standardised_by_the_set_statistics(kind: str) -> None:
    states, prompts, cue = inputs()
    mean, std = torch.linspace(-1, 1, 10), torch.linspace(0.5, 2, 10)
    mean[3:6], std[3:6] = 0.0, 1.0  # the rotation matrix is made from the raw axis-angle: keep it equal
    scaled = net_of(kind)
    scaled.set_normalisation(mean, std)
    plain = net_of(kind)  # the same weights, identity statistics, fed the standardised inputs
    got = run(scaled, states, prompts, cue)["actions"]
    want = run(plain, (states - mean) / std, prompts, (cue - mean[:8]) / std[:8])["actions"]
    torch.testing.assert_close(got, want)
    assert not torch.allclose(got, run(plain, states, prompts, cue)["actions"])


def test_statistics_of_another_width_or_without_spread_are_refused() -> None:
    net = net_of("bc-mlp")
    with pytest.raises(ValueError, match="shape"):
        net.set_normalisation(torch.zeros(9), torch.ones(9))
    with pytest.raises(ValueError, match="positive"):
        net.set_normalisation(torch.zeros(10), torch.zeros(10))


@pytest.mark.parametrize("kind", ["bc-gru", "bc-transformer"])
def test_a_scene_memory_does_not_read_the_robot_state_but_remembers_the_scene(kind: str) -> None:
    net = net_of(kind, "scene")
    states, prompts, cue = inputs()
    robot, scene = states.clone(), states.clone()
    robot[0, 8, :8] += 5.0  # two frames back: the robot's state only
    scene[0, 8, 8:] += 5.0  # two frames back: the rest of the frame
    memory = run(net, states, prompts, cue)["memory"][0, -1]
    torch.testing.assert_close(memory, run(net, robot, prompts, cue)["memory"][0, -1])
    assert not torch.allclose(memory, run(net, scene, prompts, cue)["memory"][0, -1])
    now = states.clone()
    now[0, -1, :8] += 5.0  # the head still acts on the robot's current state
    assert not torch.allclose(
        run(net, states, prompts, cue)["actions"][0, -1], run(net, now, prompts, cue)["actions"][0, -1]
    )


def test_an_unknown_memory_input_is_refused() -> None:
    with pytest.raises(ValueError, match="memory input"):
        PolicyConfig("bc-gru", state_dim=10, text_dim=6, memory_input="robot")


def test_the_rotation_matrix_is_rodrigues_and_the_same_for_both_axis_angles_of_a_rotation() -> None:
    from scipy.spatial.transform import Rotation

    from memobench.training.models import rotation_matrix

    g = torch.Generator().manual_seed(3)
    axes = torch.nn.functional.normalize(torch.randn(6, 3, generator=g, dtype=torch.float64), dim=-1)
    angles = torch.tensor([0.3, 1.0, 3.0, 3.1, 3.2, 6.0], dtype=torch.float64)[:, None]
    vectors = torch.cat([axes * angles, torch.zeros(1, 3, dtype=torch.float64)])
    want = Rotation.from_rotvec(vectors.numpy()).as_matrix().reshape(-1, 9)
    torch.testing.assert_close(rotation_matrix(vectors), torch.from_numpy(want))
    # near a half-turn, axis-angle jumps between (a, n) and (a - 2 pi, n); the matrix does not
    other = axes * (angles - 2 * torch.pi)
    torch.testing.assert_close(rotation_matrix(other), rotation_matrix(axes * angles))


def test_a_checkpoint_of_another_network_layout_is_refused(tmp_path) -> None:
    from safetensors.torch import save_file

    from memobench.training.checkpoint_files import load_weights

    weights = dict(net_of("bc-mlp").state_dict())
    weights["encoder.0.weight"] = torch.ones(3)  # as a network of another input width would have it
    save_file({k: v.contiguous() for k, v in weights.items()}, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match="another network layout.*train it again"):
        load_weights(tmp_path, net_of("bc-mlp"))
    # a transformer of the layout before the distance bias: other weight names
    weights = {
        k.replace("memory.blocks.0.", "memory.layers.0."): v for k, v in net_of("bc-transformer").state_dict().items()
    }
    save_file({k: v.contiguous() for k, v in weights.items()}, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match=r"another network layout \(memory.layers.0.* is not in the network.*again"):
        load_weights(tmp_path, net_of("bc-transformer"))
