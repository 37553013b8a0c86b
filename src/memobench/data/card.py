"""The dataset card (``README.md``) written into every dataset folder."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from memobench.data.collect import DEMO_SEED_BASE

HDF5_FORMAT = """One HDF5 file per task (`<task_id>.hdf5`) in the LIBERO/robomimic layout: per demo
`actions` (OSC_POSE deltas), `states` (MuJoCo integration state before each action),
`robot_states`, `obs/` (end-effector position and orientation, gripper and joint states,
and `agentview_rgb` / `eye_in_hand_rgb` once rendered), the cue's states and frames under
`cue/`, and attributes: task id, instruction, binding, seed, BDDL text and the memory
annotation (per checkpoint: key frame, op label, three texts). See
`memobench/data/demo_file.py` for the exact tree."""

LEROBOT_FORMAT = """LeRobot dataset format v3.0 (parquet + mp4 + meta), as LeRobot 0.4.x writes it:
`meta/stats.json` has min, max, mean, std, count and the quantiles q01, q10, q50, q90, q99
for every numeric and video feature, and each episode row its own statistics
(`stats/<feature>/<stat>`). Videos are H.264 with a keyframe every 2 frames. See
`memobench/data/lerobot.py`."""

OPENPI_FORMAT = """LeRobot dataset format v2.1 (per-episode parquet files; `meta/info.json`, `tasks.jsonl`,
`episodes.jsonl`, `episodes_stats.jsonl`), the format of the LeRobot commit openpi pins, with
the keys openpi's LIBERO data config reads: `image` and `wrist_image` (PNG frames at the size
the demos were rendered at), `state` (8 floats), `actions` (7) and the task as the prompt
(`prompt_from_task`; which prompt: `meta/memobench_prompts.json`). `norm_stats.json` is openpi's
normalisation file (mean, std, q01, q99 of `state` and `actions`): copy it to
`assets/<train config>/<repo id>/` in the openpi checkout. See `memobench/data/openpi.py`
and `examples/openpi/`."""

CUE_FORMAT = """**The cue is not in the rows.** Each episode's rows are the policy's steps, from its first
(`frame_index` 0) to its last, and every row's action is a demonstrated action; statistics
are over those rows only. At evaluation the harness shows a policy the task's cue before its
first step and runs no action of it (docs/protocol.md): it passes each cue frame to the
policy's `observe` (robot state, and the cameras' frames to a policy that takes images), then
sends one cue query (`cue`: true, with the whole cue video as `prompt_video` to a policy that
asks for it) whose answer is discarded; a stock openpi server asks for neither and never sees
the cue (README: Remote policies). The export keeps the cue beside each episode the same
way: `cue/chunk-CCC/episode_EEEEEE.parquet` (the cue's robot states per frame) and
`cue/chunk-CCC/<image key>/episode_EEEEEE.mp4` (the cue as each camera saw it), with the
episode's `memobench/cue_length` frames (0: no cue, no files)."""

MEMORY_FORMAT = """Per frame, the memory annotation: `memory.so_far.{coarse,intermediate,fine}` is exactly the
line the harness appends to the instruction under `--memory-oracle` ("Memory: <completed
checkpoints' texts>." or "Memory: nothing done yet."; the oracle prompt is the task, a newline
and this line); `memory.completed` the completed-checkpoint mask (padded with False to the
largest checkpoint count, `memory.num_checkpoints` real ones); `memory.checkpoint_index`,
`memory.op` and `memory.text.*` the active checkpoint (the first not completed); and
`memory.binding` the episode's binding (JSON). Episodes also carry `memobench/task_id`,
`memobench/seed` and `memobench/checkpoints` (JSON)."""

FORMATS = {"hdf5": [HDF5_FORMAT], "lerobot": [LEROBOT_FORMAT, CUE_FORMAT, MEMORY_FORMAT]}
FORMATS["openpi"] = [OPENPI_FORMAT, CUE_FORMAT, MEMORY_FORMAT]

ENVIRONMENT_STATE_FORMAT = """`observation.environment_state` (104 floats per frame) is the scene as a camera could
see it: each object's pose (xyz and quaternion wxyz, 12 slots, objects in sorted name
order), then its visibility flag (12), then the fixtures' joint positions (8 slots, fixtures in
sorted order), zero-padded. An object inside a closed drawer or microwave has a zero pose and
visibility 0. `observation.state` followed by `observation.environment_state` is the `state`
observation `memobench train --obs state` trains on (and `--policy checkpoint` builds at
evaluation). The cue files hold no scene vectors (the cue is shown to a camera-free policy as
robot states)."""


def dataset_card(
    files: list[tuple[dict[str, Any], int]], *, fmt: str, command: str, environment_state: bool = False
) -> str:
    """Markdown card from each task file's attributes and its demo count (``environment_state``: the
    LeRobot export carries ``observation.environment_state``)."""
    families: dict[str, int] = defaultdict(int)
    rows = []
    for attrs, demos in sorted(files, key=lambda f: f[0]["task_id"]):
        families[attrs["family"]] += demos
        attempts = attrs.get("attempts", demos)
        rate = f"{demos / attempts:.0%}" if attempts else "-"
        rows.append(
            f"| {attrs['task_id']} | {attrs['family']} | {demos} | {attempts} | {rate} | {attrs.get('total', '-')} |"
        )
    total = sum(families.values())
    seed_bases = sorted({attrs.get("seed_base", DEMO_SEED_BASE) for attrs, _ in files})
    noises = sorted({float(attrs.get("action_noise", 0.0)) for attrs, _ in files})
    lines = [
        "# MEMOBench expert demonstrations",
        "",
        f"{total} demonstrations of {len(files)} task(s): "
        + ", ".join(f"{n} {family}" for family, n in sorted(families.items()))
        + ".",
        "",
        "## How they were made",
        "",
        f"`{command}` (the latest command to write this folder; a collection may take several). "
        "The scripted MEMOBench expert (privileged simulator state, explicit memory) ran "
        "each task in LIBERO/robosuite/MuJoCo through the evaluation harness, camera-free; every "
        "successful episode was kept until each task had its count. Attempt *a* of a task uses seed "
        f"{' / '.join(str(b) for b in seed_bases)} + *a* (evaluation uses 7 + *e*, so no demonstration "
        "shares an episode with an evaluation run). Images, where present, were rendered afterwards "
        "from the stored states (`memobench data render`), identical to live frames: drawn at the "
        "harness's camera size (256 px) and resized to the image size as it resizes to `--resize-size` "
        "(pad mode), so they are the pixels a policy is shown at evaluation with `--resize-size` equal "
        "to the image size, cue frames included. Each file's `data` attributes record `image_size`, "
        "`camera_size` and `render_quality`.",
        "",
        *([perturbation_note(noises), ""] if any(noises) else []),
        "| task | family | demos | attempts | expert success | frames |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "## Format",
        "",
        *[line for part in FORMATS[fmt] for line in (part, "")],
        *([ENVIRONMENT_STATE_FORMAT, ""] if environment_state else []),
        "Check a dataset with `memobench data validate DIR` (HDF5: replays every demo).",
        "",
    ]
    return "\n".join(lines)


def perturbation_note(noises: list[float]) -> str:
    """What a perturbed collection (``collect --action-noise``) changes, for the card."""
    return (
        "**Perturbed execution** (action noise "
        + " / ".join(f"{n:g}" for n in noises)
        + "; 0 means unperturbed): the expert was queried every step and its action executed with "
        "Gaussian noise of that deviation on the six arm dimensions (not the gripper), clipped to [-1, 1], "
        "so the demos also show the expert correcting from states a little off its path (DART). `action` / "
        "`actions` is the expert's own action in each recorded state, the label to learn; in the HDF5 files "
        "`executed_actions` is what ran (what replays the demo)."
    )


def write_card(
    folder: Path, files: list[tuple[dict[str, Any], int]], *, fmt: str, command: str, environment_state: bool = False
) -> Path:
    path = folder / "README.md"
    path.write_text(dataset_card(files, fmt=fmt, command=command, environment_state=environment_state))
    return path


def hdf5_card_inputs(folder: Path) -> list[tuple[dict[str, Any], int]]:
    """(file attributes, number of demos) for every task file in ``folder``."""
    from memobench.data.demo_file import read_file_summary

    return [read_file_summary(path) for path in sorted(folder.glob("*.hdf5"))]
