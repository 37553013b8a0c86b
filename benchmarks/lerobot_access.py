"""Item access time of a LeRobot export, read by LeRobot itself: random order against file order.

A training DataLoader shuffles, so each item it draws decodes its frames from a video position
unrelated to the last one: the cost per item is a seek to the nearest keyframe and the decode
from there (the export writes a keyframe every ``KEYFRAME_INTERVAL`` frames). Reading the items
in file order decodes each frame once. Both orders run in this process over the same number of
items, with the same ``delta_timestamps`` (an action chunk, as policies train), so the ratio
random / sequential is what a shuffled loader pays for the video layout on this machine.

Runs where LeRobot is installed (README, "Loading it with LeRobot"), as a module from the
repository root:

    lerobot-venv/bin/python -m benchmarks.lerobot_access DIR [--items 200] [--chunk 50] [--seed 0]

DIR is a ``memobench data export`` folder with camera frames (``data render`` the demos first).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def timed_items(dataset, indices) -> float:
    """Seconds per item to read ``dataset[i]`` for each ``i`` of ``indices``."""
    start = time.perf_counter()
    for i in indices:
        dataset[int(i)]
    return (time.perf_counter() - start) / len(indices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", type=Path, help="a memobench data export folder (LeRobot v3.0) with videos")
    parser.add_argument("--items", type=int, default=200, help="items read in each order")
    parser.add_argument("--chunk", type=int, default=50, help="actions per item (delta_timestamps)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    info = json.loads((args.export / "meta/info.json").read_text())
    videos = [k for k, f in info["features"].items() if f["dtype"] == "video"]
    if not videos:
        raise SystemExit(f"{args.export}: no video features; render the demos before exporting them")
    fps = info["fps"]
    dataset = LeRobotDataset(
        "memobench/access", root=args.export, delta_timestamps={"action": [i / fps for i in range(args.chunk)]}
    )
    total = len(dataset)
    items = min(args.items, total)
    first = np.random.default_rng(args.seed).integers(0, total - items + 1)
    sequential = np.arange(first, first + items)
    shuffled = np.random.default_rng(args.seed + 1).choice(total, size=items, replace=False)
    timed_items(dataset, sequential[:5])  # open the files and the decoder before timing
    seq = timed_items(dataset, sequential)
    rnd = timed_items(dataset, shuffled)
    size = info["features"][videos[0]]["shape"]
    print(f"{args.export}: {info['total_episodes']} episodes, {total} frames, {len(videos)} cameras {size}")
    print(f"sequential  {seq * 1000:7.1f} ms/item  ({items} items from frame {first})")
    print(f"random      {rnd * 1000:7.1f} ms/item  ({items} items)")
    print(f"ratio random / sequential: {rnd / seq:.2f}")


if __name__ == "__main__":
    main()
