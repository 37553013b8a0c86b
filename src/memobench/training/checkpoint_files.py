"""A training run's folder: its configuration, its last checkpoint (safetensors) and its logs.

::

    OUT/config.json              what was trained and how (policy, data, losses, embedder)
    OUT/checkpoint/model.safetensors      the network's weights
    OUT/checkpoint/optimizer.safetensors  AdamW's moments; param groups and step in state.json
    OUT/checkpoint/texts.safetensors      every text embedded so far (metadata "texts": JSON list)
    OUT/checkpoint/state.json             the optimiser step reached, param groups
    OUT/train_log.csv, OUT/tensorboard/   per-step losses

A checkpoint is written to ``checkpoint.partial/`` and swapped in with renames, so a run
killed at any point leaves a complete checkpoint (``checkpoint/``, or ``checkpoint.old/``
in the instant between the two renames). A finished run may keep its weights only (the
committed reference models do): it evaluates, but training it further is refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

CONFIG = "config.json"
CHECKPOINT = "checkpoint"


def last_checkpoint(out: Path) -> Path | None:
    """The folder of the newest complete checkpoint under ``out``, or None."""
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):
        folder = out / name
        if (folder / "state.json").exists():
            return folder
    return None


def save_checkpoint(out: Path, net, optimizer, step: int, texts: list[str], table: np.ndarray) -> Path:
    """Write weights, optimiser state, text table and step atomically; returns the checkpoint folder."""
    import torch
    from safetensors.torch import save_file

    partial = out / f"{CHECKPOINT}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, partial / "model.safetensors")
    opt = optimizer.state_dict()
    tensors = {
        f"{index}.{key}": (value if torch.is_tensor(value) else torch.tensor(value)).contiguous()
        for index, state in opt["state"].items()
        for key, value in state.items()
    }
    save_file(tensors, partial / "optimizer.safetensors")
    save_file(
        {"table": torch.from_numpy(np.ascontiguousarray(table, np.float32))},
        partial / "texts.safetensors",
        metadata={"texts": json.dumps(texts)},
    )
    (partial / "state.json").write_text(json.dumps({"step": step, "param_groups": opt["param_groups"]}, indent=1))
    final, old = out / CHECKPOINT, out / f"{CHECKPOINT}.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    partial.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def load_texts(folder: Path) -> tuple[list[str], np.ndarray]:
    """The checkpoint's embedded texts and their vectors [N, E]."""
    from safetensors import safe_open

    with safe_open(folder / "texts.safetensors", "np") as f:
        return json.loads(f.metadata()["texts"]), f.get_tensor("table")


def load_weights(folder: Path, net) -> None:
    from safetensors.torch import load_file

    weights = load_file(folder / "model.safetensors")
    if "state_mean" not in weights:
        raise ValueError(f"{folder}: trained before states were standardised (2026-12-03); train it again")
    expected = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    mismatches = [f"{k} is not in the network" for k in sorted(set(weights) - set(expected))]
    mismatches += [f"{k} is missing" for k in sorted(set(expected) - set(weights))]
    mismatches += [
        f"{k}: {tuple(v.shape)}, now {expected[k]}"
        for k, v in weights.items()
        if k in expected and tuple(v.shape) != expected[k]
    ]
    if mismatches:  # the dated layout changes say why an old checkpoint no longer fits
        raise ValueError(
            f"{folder}: trained with another network layout ({mismatches[0]}; the rotation-matrix input and "
            "bc-transformer's distance bias came on 2026-12-03); train it again"
        )
    net.load_state_dict(weights)


def checkpoint_step(folder: Path) -> int:
    """The optimiser step the checkpoint ``folder`` reached."""
    return int(json.loads((folder / "state.json").read_text())["step"])


def load_optimizer(folder: Path, optimizer) -> int:
    """Restore AdamW's state from ``folder``; returns the step the checkpoint reached."""
    from safetensors.torch import load_file

    if not (folder / "optimizer.safetensors").exists():  # a committed model keeps its weights only
        raise ValueError(
            f"{folder}: weights only (the optimiser's state was not kept), so the run cannot go on; "
            "it can be evaluated, or trained again into another --out"
        )
    meta = json.loads((folder / "state.json").read_text())
    state: dict[int, dict[str, Any]] = {}
    for name, tensor in load_file(folder / "optimizer.safetensors").items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = tensor
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    return int(meta["step"])


def read_config(out: Path) -> dict[str, Any] | None:
    path = out / CONFIG
    return json.loads(path.read_text()) if path.exists() else None


def write_config(out: Path, config: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"{CONFIG}.partial"
    tmp.write_text(json.dumps(config, indent=1, sort_keys=True))
    tmp.replace(out / CONFIG)
