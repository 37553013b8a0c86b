"""The task catalogue (``docs/tasks.md``): one section per task, generated from the task files.

Text comes from the task files alone (:func:`catalogue_markdown`); the stills
(the initial scene of episode 0, and for cue tasks the cue frame where the
hand is closest to its first target) are rendered by :func:`render_stills`,
which needs the simulator and a renderer. Regenerate with
``memobench tasks catalogue``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.spec import HomeGateSpec, TaskSpec, violation_window
from memobench.core.suite import Task, arena_number
from memobench.core.suite_counts import COUNT_KEYS, suite_stats

STILL_SIZE = 256  # pixels; the harness's camera size
STILL_SEED_BASE = 7  # the protocol's seed base: the stills show evaluation episode 0


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _binding_value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_binding_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _bindings_lines(spec: TaskSpec) -> list[str]:
    if not spec.bindings:
        return ["No binding: only the episode's history tells what was done.", ""]
    lines = ["| binding | value | meaning |", "|---|---|---|"]
    for name, domain in spec.bindings.items():
        for value in domain:
            label = value.get("name", "") if isinstance(value, dict) else value
            meaning = {k: v for k, v in value.items() if k != "name"} if isinstance(value, dict) else value
            lines.append(f"| `{name}` | {_cell(label)} | {_cell(_binding_value(meaning))} |")
    return [*lines, ""]


def _checkpoint_lines(spec: TaskSpec) -> list[str]:
    lines = ["| # | checkpoint | op | why this op | coarse | intermediate | fine |", "|---|---|---|---|---|---|---|"]
    for i, cp in enumerate(spec.checkpoints, 1):
        optional = " (optional)" if cp.optional else ""
        lines.append(
            f"| {i} | `{cp.id}`{optional} | {cp.op.value} | {_cell(cp.why) or '-'} | "
            f"{_cell(cp.text.coarse)} | {_cell(cp.text.intermediate)} | {_cell(cp.text.fine)} |"
        )
    return [*lines, ""]


def _violation_lines(spec: TaskSpec) -> list[str]:
    head = (
        "**Commitments** (the episode fails when one holds while active; MEMOBench's protocol adds the"
        " register rules of docs/protocol.md)"
    )
    lines = [head, ""]
    if spec.violations:
        lines += ["| violation | active | what | predicate |", "|---|---|---|---|"]
        for v in spec.violations:
            window = _cell(violation_window(spec, v))
            lines.append(f"| `{v.name}` | {window} | {_cell(v.text)} | `{_cell(v.predicate)}` |")
    else:
        lines.append("None.")
    lines.append("")
    if spec.home:
        gates = ", ".join(_gate_text(g) for g in spec.home)
        lines += [f"**Home gates** (the arm back at its start pose before anything later counts): {gates}.", ""]
    if spec.moves_early:
        lines += [f"**Moves early** (no moved-early rule): {', '.join(f'`{o}`' for o in spec.moves_early)}.", ""]
    return lines


def _gate_text(gate: HomeGateSpec) -> str:
    text = f"after `{gate.after}`"
    if gate.where:
        text += f" with `{_cell(gate.where)}`"
    if gate.keep:
        text += f" (keeping `{_cell(gate.keep)}` until then)"
    return text


def still_names(task: Task) -> dict[str, str]:
    """File names of the task's stills: ``initial`` always, ``cue`` for cue tasks."""
    names = {"initial": f"{task.id}_initial.png"}
    if task.spec.cue is not None:
        names["cue"] = f"{task.id}_cue.png"
    return names


def task_section(task: Task, image_dir: str | None) -> list[str]:
    """Markdown lines of one task's section; ``image_dir`` is relative to the markdown file."""
    spec = task.spec
    facts = [
        f"family **{spec.family.value}**",
        f"horizon {spec.horizon} steps",
        f"chance level {spec.chance:.3f}",
        f"{spec.n_variants} binding variant(s)",
    ]
    if spec.counting:
        facts.append(
            f"counting task ({spec.counting.required} pours of `{spec.counting.object}` over `{spec.counting.target}`)"
        )
    if spec.tags:
        facts.append("tags: " + ", ".join(spec.tags))
    lines = [f"## {task.id}", "", f"> {spec.instruction}", "", " · ".join(facts), ""]
    if spec.cue is not None:
        what = {"point": "the hand points at", "demo": "the scripted expert performs the routine"}[spec.cue.kind]
        targets = f" {', '.join(f'`{t}`' for t in spec.cue.targets)}" if spec.cue.targets else ""
        lines += [f"Cue (`{spec.cue.kind}`): {what}{targets}; then the scene is restored.", ""]
    lines += [
        "**Bindings**",
        "",
        *_bindings_lines(spec),
        "**Checkpoints**",
        "",
        *_checkpoint_lines(spec),
        *_violation_lines(spec),
    ]
    if spec.notes:
        lines += ["**Design note**: " + _cell(spec.notes), ""]
    if image_dir is not None:
        names = still_names(task)
        captions = {"initial": "initial scene (episode 0)", "cue": "cue video"}
        lines += [" ".join(f"![{task.id} {captions[k]}]({image_dir}/{v})" for k, v in names.items()), ""]
    return lines


def catalogue_markdown(tasks: Iterable[Task], image_dir: str | None = "tasks") -> str:
    """The whole catalogue: a summary table, the suite counts, then one section per task.

    Titled after the suite when every task is the arena's (RoboMemArena's tasks), else MEMOBench's."""
    tasks = list(tasks)
    stats = suite_stats(tasks)
    counts = stats.total.counts()
    arena = bool(tasks) and all(arena_number(task.id) is not None for task in tasks)
    lines = [
        "# Arena task catalogue (RoboMemArena's tasks)" if arena else "# MEMOBench task catalogue",
        "",
        "Generated from the task files by `memobench tasks catalogue`; do not edit by hand.",
        "",
        "Suite: " + ", ".join(f"{counts[k]} {k.replace('_', ' ')}" for k in COUNT_KEYS) + ".",
        "",
        "| task | family | checkpoints (ops) | chance | instruction |",
        "|---|---|---|---|---|",
    ]
    for task in tasks:
        ops = "".join(cp.op.value[0].upper() for cp in task.spec.checkpoints)
        lines.append(
            f"| [{task.id}](#{task.id.lower()}) | {task.spec.family.value} | {ops} | "
            f"{task.spec.chance:.3f} | {_cell(task.spec.instruction)} |"
        )
    lines.append("")
    for task in tasks:
        lines += task_section(task, image_dir)
    return "\n".join(lines)


def render_stills(task: Task, out_dir: Path, *, size: int = STILL_SIZE) -> dict[str, Path]:
    """Render the task's stills for episode 0 into ``out_dir``; returns kind -> path.

    The initial scene is the state the policy starts from (after the cue, which
    restores the scene); the cue still is the frame where a pointing cue's hand is
    closest to its first target, or where a demonstration first closes the fingers.
    """
    import imageio.v3 as iio

    from memobench.evaluation.episode import cue_targets, play_cue
    from memobench.evaluation.protocol import Protocol, plan_episode
    from memobench.experts.plans.cues import GAP_CHANGE, finger_gap
    from memobench.sim.env import SimEnv
    from memobench.sim.world import WorldView

    plan = plan_episode(task, 0, STILL_SEED_BASE)
    names = still_names(task)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = SimEnv(task.bddl(plan.binding), render=True)
    try:
        env.reset(plan.layout_seed)
        frames = {"initial": env.render("agentview", size)}
        if task.spec.cue is not None:
            world = WorldView(env)
            targets = cue_targets(task, plan.binding)
            first = world.position(targets[0]) if targets else None
            cue = play_cue(task, plan, env, world, Protocol(camera_size=size))
            if first is not None:
                distances = [np.linalg.norm(np.asarray(s[:2]) - first[:2]) for s in cue.states]
                index = int(np.argmin(distances))
            else:  # a demonstration: the frame after the fingers first close on something
                gaps = [finger_gap(s) for s in cue.states]
                index = next(
                    (i + 1 for i in range(len(gaps) - 1) if gaps[i + 1] < gaps[i] - GAP_CHANGE), len(gaps) // 2
                )
            frames["cue"] = cue.frames[min(index, len(cue.frames) - 1)]
    finally:
        env.close()
    paths = {}
    for kind, frame in frames.items():
        paths[kind] = out_dir / names[kind]
        iio.imwrite(paths[kind], frame)
    return paths
