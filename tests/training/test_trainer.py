"""``train``: it learns, logs, checkpoints in safetensors, resumes exactly, and refuses a changed setting."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import write_dataset  # noqa: E402

from memobench.training.checkpoint_files import last_checkpoint, load_texts  # noqa: E402
from memobench.training.embedding import HashEmbedder  # noqa: E402
from memobench.training.trainer import TrainSettings, train  # noqa: E402


@pytest.fixture
def data(tmp_path):
    write_dataset(tmp_path / "data", tmp_path / "data" / "state-features")
    return tmp_path / "data"


def settings(**changes) -> TrainSettings:
    base = dict(policy="bc-gru", align="contrastive", steps=6, batch_size=3, hidden=16, chunk=4, checkpoint_every=2)
    return TrainSettings(**(base | {"embedder": "hash"} | changes))


def weights(out):
    from safetensors.torch import load_file

    return load_file(last_checkpoint(out) / "model.safetensors")


@pytest.mark.parametrize("policy", ["bc-mlp", "bc-gru", "bc-transformer"])
@pytest.mark.parametrize("align", ["semantic", "contrastive", "framewise"])
def test_every_policy_trains_with_every_loss(tmp_path, data, policy, align) -> None:
    result = train(settings(policy=policy, align=align, steps=2), data, tmp_path / "out", embedder=HashEmbedder(8))
    assert result["step"] == 2 and np.isfinite(result["loss"])
    with (tmp_path / "out" / "train_log.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [1, 2] and float(rows[0]["align"]) > 0


def test_loss_falls_on_a_small_dataset(tmp_path, data) -> None:
    train(
        settings(align="none", steps=60, lr=3e-3, chunk=1, checkpoint_every=60),
        data,
        tmp_path / "out",
        embedder=HashEmbedder(8),
    )
    with (tmp_path / "out" / "train_log.csv").open() as f:
        rows = list(csv.DictReader(f))
    bc = [float(r["bc"]) for r in rows]
    assert np.mean(bc[-10:]) < 0.75 * np.mean(bc[:10])
    assert {r["align"] for r in rows} == {"0.0"}  # no alignment loss: zero, never "-0.0"


@pytest.mark.parametrize("noise", [0.0, 0.2])
def test_a_resumed_run_ends_where_an_uninterrupted_one_does(tmp_path, data, noise) -> None:
    whole, split = tmp_path / "whole", tmp_path / "split"
    train(settings(state_noise=noise), data, whole, embedder=HashEmbedder(8))
    train(settings(steps=4, state_noise=noise), data, split, embedder=HashEmbedder(8))  # "killed" after step 4
    (split / "train_log.csv").open("a").write("5,9,9,9,0\n")  # a row written after the last checkpoint
    result = train(settings(state_noise=noise), data, split, embedder=HashEmbedder(8))
    assert result["step"] == 6
    a, b = weights(whole), weights(split)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    with (split / "train_log.csv").open() as f:
        assert [int(r["step"]) for r in csv.DictReader(f)] == [1, 2, 3, 4, 5, 6]
    texts, table = load_texts(last_checkpoint(split))
    assert "do task 0" in texts and table.shape == (len(texts), 8)


def test_resuming_with_another_setting_is_refused_naming_it(tmp_path, data) -> None:
    train(settings(steps=2), data, tmp_path / "out", embedder=HashEmbedder(8))
    with pytest.raises(ValueError, match="^align was 'contrastive' in this run folder, now 'semantic'"):
        train(settings(steps=4, align="semantic"), data, tmp_path / "out", embedder=HashEmbedder(8))


def test_an_empty_data_folder_is_refused(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no demo files"):
        train(settings(), tmp_path / "empty", tmp_path / "out", embedder=HashEmbedder(8))


def test_resuming_on_other_demos_is_refused(tmp_path, data) -> None:
    train(settings(steps=2), data, tmp_path / "out", embedder=HashEmbedder(8))
    more = tmp_path / "more"
    write_dataset(more, more / "state-features", tasks=3)
    with pytest.raises(ValueError, match=r"^the data changed since this run began \(4 demos, now 6\)"):
        train(settings(steps=4), more, tmp_path / "out", embedder=HashEmbedder(8))
    train(settings(steps=4), data, tmp_path / "out", embedder=HashEmbedder(8))  # the same demos resume


def test_a_features_folder_is_refused_for_a_lerobot_export(tmp_path) -> None:
    export = tmp_path / "export"
    (export / "meta").mkdir(parents=True)
    (export / "meta" / "info.json").write_text("{}")
    with pytest.raises(ValueError, match="is a LeRobot export, which carries its own state: --features"):
        train(settings(), export, tmp_path / "out", features_dir=tmp_path / "f", embedder=HashEmbedder(8))


def test_the_network_standardises_states_by_the_demos_statistics(tmp_path, data) -> None:
    import h5py

    from memobench.training.dataset import MIN_STD

    train(settings(steps=1), data, tmp_path / "out", embedder=HashEmbedder(8))
    states = []
    for path in sorted((data / "state-features").glob("*.hdf5")):
        with h5py.File(path, "r") as f:
            states += [f[name]["state"][()] for name in f]
    every = np.concatenate(states).astype(np.float64)
    saved = weights(tmp_path / "out")
    np.testing.assert_allclose(saved["state_mean"].numpy(), every.mean(0), atol=1e-6)
    np.testing.assert_allclose(saved["state_std"].numpy(), np.maximum(every.std(0), MIN_STD), rtol=1e-5)
    assert (saved["state_std"].numpy()[:8] > MIN_STD).all()  # the robot state varies; the padding does not


def test_a_checkpoint_from_before_standardisation_is_refused_clearly(tmp_path, data) -> None:
    from safetensors.torch import save_file

    from memobench.training.checkpoint_files import load_weights
    from memobench.training.models import MemoryPolicy, PolicyConfig
    from memobench.training.trainer import read_config

    out = tmp_path / "out"
    train(settings(steps=1), data, out, embedder=HashEmbedder(8))
    old = {k: v for k, v in weights(out).items() if not k.startswith("state_")}
    save_file(old, str(last_checkpoint(out) / "model.safetensors"))
    net = MemoryPolicy(PolicyConfig(**read_config(out)["policy"]))
    with pytest.raises(ValueError, match="train it again"):
        load_weights(last_checkpoint(out), net)


def test_state_noise_is_scaled_per_dimension_and_off_by_default() -> None:
    from memobench.training.trainer import noisy

    states, std = torch.zeros(4, 500, 3), torch.tensor([0.01, 1.0, 10.0])
    assert noisy(states, 0.0, std, torch.Generator()) is states
    drawn = noisy(states, 0.5, std, torch.Generator().manual_seed(0))
    torch.testing.assert_close(drawn.std(dim=(0, 1)), 0.5 * std, rtol=0.1, atol=0)
    with pytest.raises(ValueError, match="state-noise"):
        TrainSettings(state_noise=-0.1)


def test_a_finished_run_needs_neither_its_data_nor_its_optimiser(tmp_path, data) -> None:
    out = tmp_path / "out"
    train(settings(steps=2), data, out, embedder=HashEmbedder(8))
    (last_checkpoint(out) / "optimizer.safetensors").unlink()  # weights only, as committed
    result = train(settings(steps=2), tmp_path / "gone", out, embedder=HashEmbedder(8))
    assert result["step"] == 2 and result["loss"] is None
    with pytest.raises(ValueError, match="weights only .* cannot go on"):
        train(settings(steps=4), data, out, embedder=HashEmbedder(8))


def test_a_published_run_keeps_float16_parameters_float32_buffers_and_nearly_its_actions(tmp_path, data) -> None:
    from memobench.training.checkpoint_files import load_weights, publish
    from memobench.training.models import MemoryPolicy, PolicyConfig
    from memobench.training.trainer import read_config

    out = tmp_path / "out"
    train(settings(policy="bc-transformer", steps=2), data, out, embedder=HashEmbedder(8))
    config = json.loads((out / "config.json").read_text())
    unfinished = config | {"settings": config["settings"] | {"steps": 4}}  # as if killed at step 2 of 4
    (out / "config.json").write_text(json.dumps(unfinished))
    with pytest.raises(ValueError, match="trained to step 2 of 4; finish it"):
        publish(out)
    (out / "config.json").write_text(json.dumps(config))
    before = weights(out)
    net = MemoryPolicy(PolicyConfig(**read_config(out)["policy"])).eval()
    load_weights(last_checkpoint(out), net)
    result = publish(out)
    stored = weights(out)
    parameters = {name for name, _ in net.named_parameters()}
    assert {k for k, v in stored.items() if v.dtype == torch.float16} == parameters
    assert stored["state_std"].dtype == torch.float32 and torch.equal(stored["state_std"], before["state_std"])
    assert not (last_checkpoint(out) / "optimizer.safetensors").exists()
    assert result["bytes_after"] < result["bytes_before"] / 2 and 0 < result["largest_change"] < 1e-3
    published = MemoryPolicy(PolicyConfig(**read_config(out)["policy"])).eval()
    load_weights(last_checkpoint(out), published)  # cast back to float32 on load
    assert {v.dtype for v in published.state_dict().values()} == {torch.float32}
    g = torch.Generator().manual_seed(0)
    states = net.state_mean + net.state_std * torch.randn(2, 7, net.state_mean.numel(), generator=g)
    args = (states, torch.randn(2, 7, 8, generator=g), torch.randn(2, 3, 8, generator=g), torch.tensor([3, 2]))
    with torch.no_grad():
        want, got = net(*args)["actions"], published(*args)["actions"]
    assert not torch.equal(want, got)  # float16 did round
    torch.testing.assert_close(got, want, atol=1e-2, rtol=0)
    published_bytes = (last_checkpoint(out) / "model.safetensors").read_bytes()
    assert publish(out)["largest_change"] == 0  # publishing again changes nothing, not even a byte
    assert (last_checkpoint(out) / "model.safetensors").read_bytes() == published_bytes
    with pytest.raises(ValueError, match="weights only .* cannot go on"):
        train(settings(policy="bc-transformer", steps=4), data, out, embedder=HashEmbedder(8))


def tamper_state(out, **changes) -> None:
    state = last_checkpoint(out) / "state.json"
    meta = json.loads(state.read_text())
    meta.update(changes)
    state.write_text(json.dumps(meta))


def truncate(path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda out: tamper_state(out, step=-5), "step -5 is outside 0..6"),
        (lambda out: tamper_state(out, step=99), "step 99 is outside 0..6"),
        (
            lambda out: tamper_state(
                out,
                param_groups=[
                    g | {"lr": 1.0}
                    for g in json.loads((last_checkpoint(out) / "state.json").read_text())["param_groups"]
                ],
            ),
            "learning rate 1.0",
        ),
        (lambda out: truncate(last_checkpoint(out) / "model.safetensors"), "not a readable checkpoint file"),
        (lambda out: truncate(last_checkpoint(out) / "optimizer.safetensors"), "not a readable checkpoint file"),
    ],
)
def test_a_tampered_checkpoint_is_refused_before_any_file_is_touched(tmp_path, data, tamper, message) -> None:
    out = tmp_path / "out"
    train(settings(steps=4), data, out, embedder=HashEmbedder(8))
    tamper(out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=re.escape(message)):
        train(settings(), data, out, embedder=HashEmbedder(8))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def poke(path, dataset: str, row: int, value: float) -> None:
    import h5py

    with h5py.File(path, "r+") as f:
        array = f[dataset][()]
        array[row, 0] = value
        f[dataset][...] = array


@pytest.mark.parametrize(
    "where, dataset, value",
    [
        ("T02-synthetic.hdf5", "data/demo_1/actions", float("nan")),
        ("state-features/T02-synthetic.state.hdf5", "demo_1/state", float("inf")),
    ],
)
def test_a_demo_with_a_non_finite_number_is_refused_naming_file_demo_and_row(tmp_path, data, where, dataset, value):
    poke(data / where, dataset, 4, value)
    out = tmp_path / "out"
    name = dataset.split("/")[-1]
    with pytest.raises(ValueError, match=rf"T02-synthetic(\.state)?\.hdf5: demo_1: {name} row 4 is not finite"):
        train(settings(), data, out, embedder=HashEmbedder(8))
    assert not (out / "train_log.csv").exists()  # refused before training began


def test_a_non_finite_loss_stops_training_naming_the_step_and_keeps_the_last_good_checkpoint(
    tmp_path, data, monkeypatch
) -> None:
    from memobench.training import trainer

    real = trainer.bc_loss
    calls = {"n": 0}

    def bc_loss(out, batch):
        calls["n"] += 1
        loss = real(out, batch)
        return loss * float("nan") if calls["n"] == 5 else loss

    monkeypatch.setattr(trainer, "bc_loss", bc_loss)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"step 5: the loss is nan .*the last checkpoint \(step 4\) is kept"):
        train(settings(), data, out, embedder=HashEmbedder(8))
    assert json.loads((last_checkpoint(out) / "state.json").read_text())["step"] == 4
    with (out / "train_log.csv").open() as f:
        assert [row["step"] for row in csv.DictReader(f)] == ["1", "2", "3", "4"]
