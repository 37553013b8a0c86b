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
in the instant between the two renames). A finished run may keep its weights only
(:func:`publish`, what the committed reference models keep): it evaluates, but training it
further is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memobench.evaluation.regular_files import open_regular, read_json_file

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


@contextlib.contextmanager
def tensor_file(path: Path) -> Iterator[Path]:
    """Read the safetensors file ``path`` inside the block: a regular file (not a symlink, FIFO or
    device: NotARegularFile), and a file safetensors cannot parse (truncated, corrupt) a ValueError
    naming it, not the library's own error."""
    from safetensors import SafetensorError

    os.close(open_regular(path, os.O_RDONLY))
    try:
        yield path
    except (SafetensorError, KeyError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable checkpoint file ({type(e).__name__}: {e})") from None


def load_texts(folder: Path) -> tuple[list[str], np.ndarray]:
    """The checkpoint's embedded texts and their vectors [N, E]."""
    from safetensors import safe_open

    with tensor_file(folder / "texts.safetensors") as path, safe_open(path, "np") as f:
        return json.loads((f.metadata() or {})["texts"]), f.get_tensor("table")


def load_weights(folder: Path, net) -> None:
    from safetensors.torch import load_file

    with tensor_file(folder / "model.safetensors") as path:
        weights = load_file(path)
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


def publish(out: Path) -> dict[str, Any]:
    """Keep a training run's weights only, its trained parameters as float16: what a commit holds.

    Halves the weights' size (bc-transformer: 7.5 MB to 3.8 MB) and drops the optimiser's state
    (twice the weights again), so a finished run fits in a repository; loading casts the
    parameters back to float32 (``load_state_dict`` copies into the network's float32 tensors).
    Buffers stay float32: the state standardisation divides by standard deviations down to
    0.01, where float16's relative error (5e-4) on a mean would shift an input by a tenth of
    a standard deviation. The evaluated model is the published one, so publish before
    evaluating. Refuses an unfinished run; leaves a published one as it is. Returns the byte
    sizes before and after and the largest absolute change of a parameter.
    """
    import torch
    from safetensors.torch import save_file

    from memobench.training.models import MemoryPolicy, PolicyConfig

    config, folder = read_config(out), last_checkpoint(out)
    if config is None or folder is None:
        raise ValueError(f"{out}: not a training folder with a checkpoint")
    step, steps = checkpoint_step(folder), int(config["settings"]["steps"])
    if step < steps:  # without the optimiser's state the run could never go on
        raise ValueError(f"{out}: trained to step {step} of {steps}; finish it (run memobench train again) first")
    model = folder / "model.safetensors"
    if _published(model) and not (folder / "optimizer.safetensors").exists():
        # left as it is: safetensors orders the header's metadata anew on every write
        size = _bytes(folder)
        return {"checkpoint": folder, "bytes_before": size, "bytes_after": size, "largest_change": 0.0}
    net = MemoryPolicy(PolicyConfig(**config["policy"]))
    load_weights(folder, net)
    parameters = {name for name, _ in net.named_parameters()}
    weights = {name: tensor.detach().contiguous() for name, tensor in net.state_dict().items()}
    largest = max(float(weights[name].abs().max()) for name in parameters)
    if largest > float(torch.finfo(torch.float16).max):
        raise ValueError(f"{out}: a parameter of magnitude {largest:g} does not fit in float16")
    stored = {name: t.half() if name in parameters else t for name, t in weights.items()}
    change = max(float((stored[name].float() - weights[name]).abs().max()) for name in parameters)
    before = _bytes(folder)
    partial = folder / "model.safetensors.partial"
    save_file(stored, partial, metadata={"parameters": "float16", "buffers": "float32"})
    partial.replace(model)
    (folder / "optimizer.safetensors").unlink(missing_ok=True)
    return {"checkpoint": folder, "bytes_before": before, "bytes_after": _bytes(folder), "largest_change": change}


def _bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir())


def _published(model: Path) -> bool:
    from safetensors import safe_open

    with tensor_file(model) as path, safe_open(path, "np") as f:
        return (f.metadata() or {}).get("parameters") == "float16"


def checkpoint_step(folder: Path) -> int:
    """The optimiser step the checkpoint ``folder`` reached."""
    return int(read_json_file(folder / "state.json")["step"])


def load_optimizer(folder: Path, optimizer) -> int:
    """Restore AdamW's state from ``folder``; returns the step the checkpoint reached."""
    from safetensors.torch import load_file

    if not (folder / "optimizer.safetensors").exists():  # a committed model keeps its weights only
        raise ValueError(
            f"{folder}: weights only (the optimiser's state was not kept), so the run cannot go on; "
            "it can be evaluated, or trained again into another --out"
        )
    meta = read_json_file(folder / "state.json")
    state: dict[int, dict[str, Any]] = {}
    with tensor_file(folder / "optimizer.safetensors") as path:
        tensors = load_file(path)
    for name, tensor in tensors.items():
        index, key = name.split(".", 1)
        state.setdefault(int(index), {})[key] = tensor
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    return int(meta["step"])


def read_config(out: Path) -> dict[str, Any] | None:
    """The training folder's ``config.json`` (None if there is none). A folder may come from anyone:
    the file must be a regular one of at most 16 MB (ValueError naming it otherwise)."""
    path = out / CONFIG
    return read_json_file(path) if os.path.lexists(path) else None


def write_config(out: Path, config: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"{CONFIG}.partial"
    tmp.write_text(json.dumps(config, indent=1, sort_keys=True))
    tmp.replace(out / CONFIG)
