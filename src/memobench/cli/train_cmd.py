"""``memobench train``: a reference memory policy from the demos (the ``train`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memobench.cli.common import fail


def train_command(
    *,
    data: Annotated[
        Path, typer.Option(help="A folder of `memobench collect` (HDF5) or of `memobench data export` (LeRobot v3.0).")
    ],
    out: Annotated[Path, typer.Option(help="The training folder (config, checkpoint, logs); run again to resume.")],
    policy: Annotated[str, typer.Option(help="bc-mlp, bc-gru or bc-transformer.")] = "bc-gru",
    obs: Annotated[
        str, typer.Option(help="Observation mode: state, or rgb (both cameras; demos from `memobench data render`).")
    ] = "state",
    align: Annotated[str, typer.Option(help="Alignment loss: none, semantic, contrastive, framewise.")] = "none",
    lam: Annotated[float, typer.Option("--lambda", help="Weight of the alignment loss.")] = 0.1,
    temperature: Annotated[float, typer.Option(help="The contrastive loss's temperature.")] = 0.1,
    text_level: Annotated[str, typer.Option(help="Annotation level: coarse, intermediate, fine.")] = "intermediate",
    oracle_memory: Annotated[
        bool, typer.Option(help="Control: the prompt carries the harness's oracle memory line (evaluate likewise).")
    ] = False,
    shuffle_subgoals: Annotated[bool, typer.Option(help="Control: shuffle which checkpoint text is which.")] = False,
    steps: Annotated[int, typer.Option(min=1, help="Optimiser steps (one batch of demos each).")] = 2000,
    batch_size: Annotated[int, typer.Option(min=1, help="Demos per batch.")] = 8,
    lr: Annotated[float, typer.Option(help="AdamW learning rate.")] = 3e-4,
    state_noise: Annotated[
        float, typer.Option(min=0.0, help="Gaussian noise on the training states, in standard deviations.")
    ] = 0.0,
    memory_input: Annotated[
        str, typer.Option(help="What the memory reads of each frame: all, or scene (not the robot's own state).")
    ] = "all",
    seed: Annotated[int, typer.Option(help="Fixes initialisation and every batch.")] = 0,
    hidden: Annotated[int, typer.Option(min=8, help="Width of the network.")] = 128,
    window: Annotated[int, typer.Option(min=1, help="bc-transformer: frames each layer attends to.")] = 16,
    stride: Annotated[int, typer.Option(min=1, help="Control steps between frames (match --replan-steps).")] = 5,
    checkpoint_every: Annotated[int, typer.Option(min=1, help="Steps between checkpoints.")] = 200,
    embedder: Annotated[str, typer.Option(help="Text encoder: minilm (all-MiniLM-L6-v2) or hash (tests).")] = "minilm",
    features: Annotated[
        Path | None, typer.Option(help="Where state features are cached (default DATA/state-features).")
    ] = None,
) -> None:
    """Train a policy with behaviour cloning and an optional memory-alignment loss (resumable)."""
    _require_torch("train")
    from memobench.cli.progress import RunProgress
    from memobench.training.trainer import TrainSettings, train

    if out.exists() and not out.is_dir():
        raise fail(f"--out {out} is a file")
    try:
        settings = TrainSettings(
            policy=policy,
            obs=obs,
            align=align,
            lam=lam,
            temperature=temperature,
            text_level=text_level,
            oracle_memory=oracle_memory,
            shuffle_subgoals=shuffle_subgoals,
            steps=steps,
            batch_size=batch_size,
            lr=lr,
            state_noise=state_noise,
            memory_input=memory_input,
            seed=seed,
            hidden=hidden,
            window=window,
            stride=stride,
            checkpoint_every=checkpoint_every,
            embedder=embedder,
        )
        settings.data_options()
        with RunProgress() as progress:
            result = train(settings, data, out, features_dir=features, events=progress)
    except ValueError as e:
        raise fail(str(e)) from None
    typer.echo(_outcome(result))
    typer.echo(f'evaluate: memobench eval --policy checkpoint --adapter-kwargs \'{{"path": "{out}"}}\'')


def publish_command(
    run: Annotated[Path, typer.Argument(help="A finished `memobench train` folder.")],
) -> None:
    """Keep a trained run's weights only, parameters as float16 (half the size), for committing it."""
    _require_torch("publish")
    from memobench.training.checkpoint_files import publish

    try:
        result = publish(run)
    except (ValueError, OSError) as e:
        raise fail(str(e)) from None
    typer.echo(
        f"{result['checkpoint']}: {result['bytes_before'] / 1e6:.1f} MB -> {result['bytes_after'] / 1e6:.1f} MB, "
        f"largest parameter change {result['largest_change']:.2g}; evaluate the run as it is now"
    )


def _require_torch(command: str) -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise fail(f"memobench {command} needs torch: pip install 'memobench[train]'") from None


def _outcome(result: dict) -> str:
    """The line saying where training ended (a run already at --steps trained nothing: no loss)."""
    if result["loss"] is None:
        return f"already trained to step {result['step']}; checkpoint {result['checkpoint']}"
    return f"step {result['step']}, loss {result['loss']}; checkpoint {result['checkpoint']}"
