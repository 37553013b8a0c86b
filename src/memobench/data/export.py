"""``memobench data export``'s choices in one place: which formats exist, which options go with
which format, the export itself, the command line a dataset card records and what the command
says afterwards (as data: the CLI draws it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = ("lerobot", "openpi")


def check_options(fmt: str, prompt: str, environment_state: bool) -> None:
    """ValueError (one line, for the user) for an unknown format or prompt, or options of the other format."""
    from memobench.data.openpi import PROMPTS

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; available: {', '.join(FORMATS)}")
    if fmt == "openpi" and environment_state:
        raise ValueError("--environment-state is for --format lerobot (openpi's LIBERO config reads no scene state)")
    if fmt == "lerobot" and prompt != "instruction":
        raise ValueError("--prompt is for --format openpi (the lerobot export carries every memory line per frame)")
    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; available: {', '.join(PROMPTS)}")


def export(folder: Path, out: Path, *, fmt: str, prompt: str, environment_state: Path | None) -> dict[str, Any]:
    """Export ``folder``'s demos to ``out`` in ``fmt`` (options checked by :func:`check_options`); returns info.json."""
    if fmt == "openpi":
        from memobench.data.openpi import export_openpi

        return export_openpi(folder, out, prompt=prompt)
    from memobench.data.lerobot import export_lerobot

    return export_lerobot(folder, out, environment_state=environment_state)


def card_command(folder: Path, out: Path, *, fmt: str, prompt: str, environment_state: bool) -> str:
    """How the dataset was made, for its card."""
    options = (" --environment-state" if environment_state else "") + (
        f" --format openpi --prompt {prompt}" if fmt == "openpi" else ""
    )
    return f"memobench collect, then memobench data export {folder} --out {out}{options}"


def openpi_summary(out: Path, info: dict[str, Any]) -> dict[str, Any]:
    """What the command says after an openpi export: a headline, notes (frame size against 224 px,
    prompts over pi0's limit) and the per-task prompt token table (``title``, ``columns``, ``rows``)."""
    from memobench.data.prompt_tokens import PI0_MAX_TOKENS, PI05_MAX_TOKENS

    report = info["memobench/prompts"]
    images = [k for k, v in info["features"].items() if v["dtype"] == "image"]
    size = info["features"][images[0]]["shape"][0] if images else None
    notes = []
    if size != 224:
        notes.append(
            f"frames are {size} px (as rendered): openpi resizes them to 224; `memobench eval` sends "
            "224 px at its default --resize-size, so render at 224 to train on the pixels it shows."
        )
    over = [r["task"] for r in report["tasks"] if not r["fits_pi0"]]
    if over:
        notes.append(
            f"{len(over)}/{len(report['tasks'])} task(s) have prompts over pi0's {PI0_MAX_TOKENS} tokens "
            "(estimated): openpi cuts them, losing their end (the memory line); raise max_token_len in the "
            "model config or use a shorter level."
        )
    return {
        "headline": f"openpi dataset (LeRobot v2.1) in {out}: {info['total_episodes']} episodes, "
        f"{info['total_frames']} frames, {info['total_tasks']} distinct prompts, images: {size} px; "
        "norm_stats.json beside meta/",
        "notes": notes,
        "title": f"longest prompt ({report['prompt']}) per task in PaliGemma tokens: {report['tokens']}",
        "columns": [
            "task",
            "prompts",
            "longest (est. tokens)",
            f"pi0 <= {PI0_MAX_TOKENS}",
            f"pi0.5 <= {PI05_MAX_TOKENS}",
        ],
        "rows": [
            [r["task"], str(r["prompts"]), str(r["max_tokens_estimate"])]
            + ["yes" if r[key] else "no: cut" for key in ("fits_pi0", "fits_pi05")]
            for r in report["tasks"]
        ],
    }
