"""Training speed and memory per reference policy, on synthetic demos of realistic length.

Writes 2 task files of 10 demos each (360-420 steps, a 60-frame cue in the first demo of each,
as the collected demos average ~360 policy steps), then for each policy (bc-mlp, bc-gru,
bc-transformer; contrastive alignment, lambda 0.1, width ``--hidden`` (default 128), batch 8 demos,
frames every 5 steps, 384-d text vectors as all-MiniLM-L6-v2 gives) trains ``--steps`` steps in
a fresh process and reports training samples (frames with a 50x7 target) per second and the
process's peak RSS; a policy's wall seconds are its steps' own (from its log), without start-up.
Baseline, in the same way: a process that only draws and collates the same
batches (reading the demos, no network); each policy is given as a ratio to it, the number to
compare across machines. Wall and CPU seconds (on a shared machine wall time includes waiting).

    .venv/bin/python -m benchmarks.train_speed [--steps 30] [--threads 1] [--hidden 128] [--obs rgb --image-size 64]

``--obs rgb`` gives the demos random frames of both cameras (and the cue's) at ``--image-size``,
where ``memobench data render`` stores them, and trains on those instead of the state vector.

Run it as a module from the repository root: the synthetic demos come from the test fixtures.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import resource
import shutil
import tempfile
import time
from pathlib import Path

from tests.training.synthetic import write_dataset

POLICIES = ("bc-mlp", "bc-gru", "bc-transformer")


def wide_hash():
    """The hashed-word embedder at the text encoder's width (384): the encoder itself runs once per text."""
    from memobench.training.embedding import HashEmbedder

    return HashEmbedder(384)


def measure(
    policy: str | None, data: str, out: str, steps: int, threads: int, obs: str = "state", hidden: int = 128
) -> dict:
    """Run in a fresh process: train ``policy`` (None: only draw and collate batches)."""
    import torch

    torch.set_num_threads(threads)
    from memobench.training.dataset import BatchSource, collate, index_demos
    from memobench.training.embedding import EmbeddingCache
    from memobench.training.trainer import TrainSettings, train

    settings = TrainSettings(
        policy=policy or "bc-mlp",
        obs=obs,
        align="contrastive",
        steps=steps,
        checkpoint_every=steps,
        embedder="hash",
        hidden=hidden,
    )
    start, cpu = time.perf_counter(), time.process_time()
    if policy is None:
        source = BatchSource(index_demos(Path(data), Path(data) / "state-features"), settings.data_options(), 8, 0)
        cache = EmbeddingCache(wide_hash())
        frames = 0
        for b in range(steps):
            items = source.items(b)
            batch = collate(items, [cache.ids(i.prompts) for i in items], [cache.ids(i.memory_texts) for i in items])
            frames += int(batch["frame_mask"].sum())
        source.close()
    else:
        train(settings, Path(data), Path(out), embedder=wide_hash())
        frames = None  # the same batches as the loader's (same seed): counted there
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if policy is not None:  # the steps alone, without start-up (imports, indexing, the first checkpoint)
        with (Path(out) / "train_log.csv").open() as f:
            wall = sum(float(row["seconds"]) for row in csv.DictReader(f))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"wall": wall, "cpu": cpu, "frames": frames, "rss_mib": peak}


def in_fresh_process(*args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="optimiser steps per policy")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--hidden", type=int, default=128, help="the networks' width")
    parser.add_argument("--obs", choices=("state", "rgb"), default="state", help="observation mode")
    parser.add_argument("--image-size", type=int, default=64, help="rgb: the frames' side in pixels")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memobench-train-speed-"))
    size = args.image_size if args.obs == "rgb" else 0
    write_dataset(
        root / "data", root / "data" / "state-features", tasks=2, demos=10, length=360, cue=60, image_size=size
    )
    base = in_fresh_process(None, str(root / "data"), "", args.steps, args.threads, args.obs)
    frames = base["frames"]  # every run draws the same batches (same seed)
    mode = f"rgb {size} px" if size else "state"
    print(
        f"{args.steps} batches of 8 demos, {frames} frames, {mode}; width {args.hidden}, torch threads {args.threads}"
    )
    print(f"{'':16} {'wall s':>8} {'cpu s':>8} {'frames/s':>9} {'x loader':>9} {'peak RSS MiB':>13} {'x loader':>9}")
    rows = [("loader only", base)]
    try:
        for policy in POLICIES:
            result = in_fresh_process(
                policy, str(root / "data"), str(root / policy), args.steps, args.threads, args.obs, args.hidden
            )
            rows.append((policy, result))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for name, r in rows:
        rate = frames / r["wall"]
        print(
            f"{name:16} {r['wall']:8.2f} {r['cpu']:8.2f} {rate:9.0f} {rate / (frames / base['wall']):9.3f}"
            f" {r['rss_mib']:13.0f} {r['rss_mib'] / base['rss_mib']:9.2f}"
        )
    for name, r in rows[1:]:  # memobench train's default, and results/baselines/run.sh's
        minutes = [r["wall"] / args.steps * n / 60 for n in (2000, 10000)]
        print(f"{name}: 2,000 steps ~ {minutes[0]:.1f} min, 10,000 steps ~ {minutes[1]:.1f} min")


if __name__ == "__main__":
    main()
