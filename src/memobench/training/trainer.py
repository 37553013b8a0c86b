"""``memobench train``: behaviour cloning of action chunks plus a weighted memory-alignment loss.

Loss = masked L1 between predicted and demonstrated chunks + ``lam`` x the alignment loss
(:mod:`memobench.training.losses`) of the run's ``align`` choice, on the memory texts of
:mod:`memobench.training.dataset`. Resumable: the same command on the same ``out`` folder
continues from its last checkpoint (a different setting is refused, naming it); since batch
``b`` is a function of the seed and ``b``, the resumed run draws the batches the uninterrupted
one would have. Progress goes through :class:`~memobench.evaluation.run_events.RunEvents`
(``jobs_started("training", steps)``, one ``job_finished`` per step).
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memobench.data.state_features import (
    ROBOT_DIM,
    STATE_DIM,
    features_path,
    featurise_task_file,
    stale_feature_files,
)
from memobench.evaluation.run_events import RunEvents
from memobench.training.checkpoint_files import (
    checkpoint_step,
    last_checkpoint,
    load_optimizer,
    load_texts,
    load_weights,
    read_config,
    save_checkpoint,
    write_config,
)
from memobench.training.dataset import (
    OBS_MODES,
    BatchSource,
    DataOptions,
    check_finite,
    collate,
    image_size,
    index_demos,
    state_statistics,
)
from memobench.training.embedding import EMBEDDERS, EmbeddingCache, TextEmbedder, make_embedder
from memobench.training.losses import ALIGN_LOSSES
from memobench.training.models import MEMORY_INPUTS, POLICIES

LOG_FIELDS = ("step", "loss", "bc", "align", "seconds")


@dataclass(frozen=True)
class TrainSettings:
    """Every choice of a training run (written to ``config.json``; a resume must repeat them)."""

    policy: str = "bc-gru"
    obs: str = "state"
    align: str = "none"
    lam: float = 0.1
    temperature: float = 0.1
    text_level: str = "intermediate"
    oracle_memory: bool = False
    shuffle_subgoals: bool = False
    steps: int = 2000
    batch_size: int = 8
    lr: float = 3e-4
    state_noise: float = 0.0
    memory_input: str = "all"
    seed: int = 0
    hidden: int = 128
    window: int = 16
    stride: int = 5
    chunk: int = 50
    contrastive_pairs: int = 64
    checkpoint_every: int = 200
    embedder: str = "minilm"

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"--policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.embedder not in EMBEDDERS:
            raise ValueError(f"unknown text embedder {self.embedder!r}; known: {', '.join(EMBEDDERS)}")
        if self.obs not in OBS_MODES:
            raise ValueError(f"--obs must be one of {', '.join(OBS_MODES)}, not {self.obs!r}")
        if self.align not in ALIGN_LOSSES:
            raise ValueError(f"--align must be one of {', '.join(ALIGN_LOSSES)}, not {self.align!r}")
        if self.steps < 1 or self.batch_size < 1 or self.checkpoint_every < 1:
            raise ValueError("--steps, --batch-size and --checkpoint-every must be positive")
        if self.lam < 0 or self.temperature <= 0:
            raise ValueError("--lambda must be >= 0 and --temperature > 0")
        if self.state_noise < 0:
            raise ValueError("--state-noise must be >= 0")
        if self.memory_input not in MEMORY_INPUTS:
            raise ValueError(f"--memory-input must be one of {', '.join(MEMORY_INPUTS)}, not {self.memory_input!r}")

    def data_options(self) -> DataOptions:
        return DataOptions(
            self.stride, self.chunk, self.text_level, self.oracle_memory, self.shuffle_subgoals, self.obs
        )

    # what may change between a run and its resume: how long it runs and how often it saves
    RESUMABLE = ("steps", "checkpoint_every")


def config_record(settings: TrainSettings, policy_config: dict[str, Any]) -> dict[str, Any]:
    return {"settings": asdict(settings), "policy": policy_config, "state_dim": policy_config["state_dim"]}


def check_resume(existing: dict[str, Any], settings: TrainSettings) -> None:
    """Refuse to resume a run made with other settings, naming the first that differs."""
    old = asdict(TrainSettings()) | existing.get("settings", {})  # a setting added since: its default
    for key, value in asdict(settings).items():
        if key not in TrainSettings.RESUMABLE and old.get(key) != value:
            raise ValueError(f"{key} was {old.get(key)!r} in this run folder, now {value!r}: use another --out")


def data_identity(source: BatchSource) -> dict[str, Any]:
    """What the batches are drawn from: the number of demos and a digest of which they are, in order.

    Batch ``b`` picks demos by index into this list, so a resume on a folder that gained, lost or
    reordered demos would not draw the batches the uninterrupted run would have.
    """
    import hashlib

    names = [ref.key for ref in source.refs]
    return {"demos": len(names), "digest": hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]}


def check_data(existing: dict[str, Any], identity: dict[str, Any]) -> None:
    """Refuse to resume on other demos than the run began with (a folder from before this check passes)."""
    old = existing.get("data")
    if old is not None and old != identity:
        raise ValueError(
            f"the data changed since this run began ({old['demos']} demos, now {identity['demos']}"
            f"{'' if old['demos'] != identity['demos'] else ', other ones'}): use another --out"
        )


def check_network(existing: dict[str, Any], policy_config) -> None:
    """Refuse to resume a run whose network the data would change (e.g. rgb frames rendered at another size)."""
    from memobench.training.models import PolicyConfig

    old = PolicyConfig(**existing.get("policy", {})).to_dict()  # a folder from before a field existed: its default
    for key, value in policy_config.to_dict().items():
        if old[key] != value:
            raise ValueError(
                f"the network's {key} was {old[key]!r} in this run folder, now {value!r}: use another --out"
            )


def prepare_features(data_dir: Path, features_dir: Path, events: RunEvents) -> None:
    """Featurise every demo file whose features are missing or stale (needs the simulator)."""
    stale = stale_feature_files(sorted(data_dir.glob("*.hdf5")), features_dir)
    if not stale:
        return
    events.jobs_started("featurising", len(stale))
    for path in stale:
        frames = featurise_task_file(path, features_path(features_dir, path))
        events.job_finished(f"{path.stem}: {frames} frames")
    events.jobs_ended()


def open_source(
    settings: TrainSettings, data_dir: Path, features_dir: Path | None, events: RunEvents
) -> tuple[BatchSource, int]:
    """The batches of ``data_dir`` and the side of its frames (0 in state mode).

    ``data_dir`` is a ``memobench collect`` folder (``*.hdf5``; state mode featurises what is not
    cached in ``features_dir``, default ``DATA/state-features``) or a ``memobench data export``
    LeRobot folder (``meta/info.json``; state mode needs its environment state, rgb its videos),
    told apart by their layout.
    """
    from memobench.training.lerobot_source import LeRobotSource, export_image_size, is_lerobot_export

    options = settings.data_options()
    if data_dir.is_dir() and is_lerobot_export(data_dir):
        if features_dir is not None:
            raise ValueError(
                f"{data_dir} is a LeRobot export, which carries its own state: --features is for a collect folder"
            )
        source = LeRobotSource(data_dir, options, settings.batch_size, settings.seed)
        return source, export_image_size(data_dir) if settings.obs == "rgb" else 0
    if not data_dir.is_dir() or not any(data_dir.glob("*.hdf5")):
        raise ValueError(
            f"{data_dir}: no demo files to train on (neither *.hdf5 of memobench collect "
            "nor a LeRobot export's meta/info.json)"
        )
    features_dir = features_dir or data_dir / "state-features"
    side = image_size(data_dir) if settings.obs == "rgb" else 0
    if not side:
        prepare_features(data_dir, features_dir, events)
    return BatchSource(index_demos(data_dir, features_dir), options, settings.batch_size, settings.seed), side


def alignment(settings: TrainSettings, out: dict, batch: dict, table, generator) -> Any:
    """The alignment loss of ``settings.align`` on one batch's outputs (0 for ``none``)."""
    import torch

    from memobench.training import losses

    mask = batch["frame_mask"]
    texts = table[batch["memory_ids"]]
    if settings.align == "semantic":
        return losses.semantic_loss(out["memory_text"], texts, mask)
    if settings.align == "framewise":
        return losses.framewise_loss(out["frame_text"], texts, mask)
    if settings.align == "contrastive":
        valid = mask.nonzero()
        pick = valid[torch.randperm(len(valid), generator=generator)[: settings.contrastive_pairs]]
        b, t = pick[:, 0], pick[:, 1]
        return losses.contrastive_loss(
            out["memory_text"][b, t], texts[b, t], batch["memory_ids"][b, t], settings.temperature
        )
    return out["actions"].new_zeros(())  # not sum() * 0: that is -0.0 when the sum is negative


def noisy(states, scale: float, std, generator) -> Any:
    """``states`` plus Gaussian noise of ``scale`` standard deviations per dimension (``std``), so the
    policy learns to act from states its own small errors lead to, not only the demos' exact ones."""
    import torch

    if not scale:
        return states
    return states + scale * std * torch.randn(states.shape, generator=generator)


def bc_loss(out: dict, batch: dict) -> Any:
    """Mean absolute error over the real rows of every real frame's chunk."""
    mask = (batch["action_mask"] & batch["frame_mask"][..., None]).unsqueeze(-1).to(out["actions"].dtype)
    return ((out["actions"] - batch["actions"]).abs() * mask).sum() / (mask.sum() * 7).clamp_min(1.0)


def _trim_log(path: Path, step: int) -> None:
    """Drop log rows past ``step`` (written after the checkpoint a resume starts from)."""
    if not path.exists():
        return
    with path.open() as f:
        rows = [r for r in csv.DictReader(f) if int(r["step"]) <= step]
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, LOG_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def check_resumed_state(folder: Path, step: int, settings: TrainSettings, net, optimizer) -> None:
    """ValueError naming the file unless the checkpoint a run resumes from is one this run could
    have written: its step within 0..steps, its weights and optimiser state finite, its learning
    rate the run's. A training folder may come from anyone; checked before a file is touched
    (the log is trimmed to the step, so a step of -5 would have emptied it)."""
    import torch

    if not 0 <= step <= settings.steps:
        raise ValueError(f"{folder}/state.json: step {step} is outside 0..{settings.steps}; train into another --out")
    for name, tensor in net.state_dict().items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise ValueError(f"{folder}/model.safetensors: {name} holds NaN or inf; train into another --out")
    for group in optimizer.param_groups:
        if group["lr"] != settings.lr:
            raise ValueError(
                f"{folder}/state.json: learning rate {group['lr']} where this run's is {settings.lr}; "
                "train into another --out"
            )
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value) and value.is_floating_point() and not torch.isfinite(value).all():
                raise ValueError(f"{folder}/optimizer.safetensors: {key} holds NaN or inf; train into another --out")


def train(
    settings: TrainSettings,
    data_dir: Path,
    out: Path,
    *,
    features_dir: Path | None = None,
    events: RunEvents | None = None,
    embedder: TextEmbedder | None = None,
) -> dict[str, Any]:
    """Train (or resume) into ``out``; returns ``{"step", "loss", "checkpoint"}`` of the last step.

    A run whose checkpoint has reached ``settings.steps`` returns at once without reading the data
    (loss None), so a committed model needs neither its demos nor its optimiser's state.
    """
    import time

    import torch

    from memobench.training.models import MemoryPolicy, PolicyConfig

    events = events or RunEvents()
    existing = read_config(out)
    if existing is not None:
        check_resume(existing, settings)
        newest = last_checkpoint(out)
        reached = 0 if newest is None else checkpoint_step(newest)
        if reached > settings.steps:
            raise ValueError(
                f"{newest}/state.json: step {reached} is outside 0..{settings.steps}; train into another --out"
            )
        if reached == settings.steps:  # finished: needs neither the data nor the optimiser's state
            return {"step": reached, "loss": None, "checkpoint": str(newest)}
    source, side = open_source(settings, data_dir, features_dir, events)
    identity = data_identity(source)
    if existing is not None:
        check_data(existing, identity)
    rgb = settings.obs == "rgb"
    torch.manual_seed(settings.seed)
    embedder = embedder or make_embedder(settings.embedder)
    policy_config = PolicyConfig(
        settings.policy,
        ROBOT_DIM if rgb else STATE_DIM,  # rgb: the robot state beside the images
        embedder.dim,
        settings.hidden,
        settings.chunk,
        settings.window,
        image_size=side,
        memory_input=settings.memory_input,
    )
    if existing is not None:
        check_network(existing, policy_config)
    net = MemoryPolicy(policy_config)
    optimizer = torch.optim.AdamW(net.parameters(), lr=settings.lr)
    cache = EmbeddingCache(embedder)
    start = 0
    folder = last_checkpoint(out)
    if folder is not None:
        load_weights(folder, net)
        start = load_optimizer(folder, optimizer)
        check_resumed_state(folder, start, settings, net, optimizer)  # before any file is written
        texts, table = load_texts(folder)
        cache = EmbeddingCache(embedder, texts, table)
    else:
        check_finite(source)  # the actions; the statistics check the states as they read them
        net.set_normalisation(*(torch.from_numpy(a) for a in state_statistics(source)))
    write_config(out, config_record(settings, policy_config.to_dict()) | {"embedder": embedder.name, "data": identity})
    log_path = out / "train_log.csv"
    _trim_log(log_path, start)
    writer = _tensorboard(out)
    generator = torch.Generator().manual_seed(settings.seed)
    last: dict[str, Any] = {"step": start, "loss": None, "checkpoint": str(folder) if folder else None}
    saved = start  # the step of the last checkpoint written (0: none)
    events.jobs_started("training", settings.steps - start)
    new_log = not log_path.exists()
    try:
        with log_path.open("a", newline="") as log:
            csv_writer = csv.DictWriter(log, LOG_FIELDS)
            if new_log:
                csv_writer.writeheader()
            for step in range(start, settings.steps):
                began = time.perf_counter()
                items = source.items(step)
                prompt_ids = [cache.ids(it.prompts) for it in items]
                memory_ids = [cache.ids(it.memory_texts) for it in items]
                batch = collate(items, prompt_ids, memory_ids)
                table = torch.from_numpy(cache.table)
                generator.manual_seed(settings.seed * 1_000_003 + step)
                net.train()
                result = net(
                    noisy(batch["states"], settings.state_noise, net.state_std, generator),
                    table[batch["prompt_ids"]],
                    batch["cue"],
                    batch["cue_lengths"],
                    batch.get("images"),
                    batch.get("cue_images"),
                )
                bc = bc_loss(result, batch)
                align = alignment(settings, result, batch, table, generator)
                loss = bc + settings.lam * align
                if not torch.isfinite(loss):
                    raise ValueError(
                        f"step {step + 1}: the loss is {loss.item()} (bc {bc.item()}, align {align.item()}); "
                        f"training stopped, the last checkpoint (step {saved}) is kept"
                    )
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimizer.step()
                row = {
                    "step": step + 1,
                    "loss": round(loss.item(), 6),
                    "bc": round(bc.item(), 6),
                    "align": round(align.item(), 6),
                    "seconds": round(time.perf_counter() - began, 4),
                }
                csv_writer.writerow(row)
                if writer is not None:
                    for key in ("loss", "bc", "align"):
                        writer.add_scalar(f"train/{key}", row[key], step + 1)
                if (step + 1) % settings.checkpoint_every == 0 or step + 1 == settings.steps:
                    log.flush()
                    last["checkpoint"] = str(save_checkpoint(out, net, optimizer, step + 1, cache.texts, cache.table))
                    saved = step + 1
                last.update(step=step + 1, loss=row["loss"])
                events.job_finished(f"loss {row['loss']:.4f} (bc {row['bc']:.4f}, align {row['align']:.4f})")
        events.jobs_ended()
    finally:
        source.close()
        if writer is not None:
            writer.close()
    return last


def _tensorboard(out: Path):
    """A TensorBoard writer into ``out/tensorboard``, or None when tensorboard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out / "tensorboard"))
