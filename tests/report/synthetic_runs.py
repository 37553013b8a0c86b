"""Synthetic run folders (``run.json`` + ``ledger.jsonl``) for tests and benchmarks; no simulator.

A record is described by its checkpoint ops (``"SUC"``: storage, update,
compression; lower case = optional) and how many checkpoints completed, in
order (prefix completion), so every metric can be computed by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from memobench.core.records import CheckpointResult, EpisodeRecord, EpisodeStatus, Violation
from memobench.core.spec import MemoryOp, MemoryType
from memobench.core.taxonomy import EXTRA_POUR, VIOLATION, classify_failure
from memobench.evaluation.ledger import LEDGER_FILENAME
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_folder import RUN_JSON

_OPS = {"s": MemoryOp.STORAGE, "u": MemoryOp.UPDATE, "c": MemoryOp.COMPRESSION}
_VIOLATIONS = (VIOLATION, EXTRA_POUR)
FAMILY = {"T": MemoryType.TEMPORAL, "S": MemoryType.SPATIAL, "O": MemoryType.OBJECT, "P": MemoryType.PROCEDURAL}


def record(
    task_id: str,
    episode: int,
    ops: str,
    done: int,
    *,
    seed_base: int = 7,
    success: bool | None = None,
    status: str = "ok",
    end_reason: str | None = None,
    steps: int = 100,
    binding: dict | None = None,
) -> EpisodeRecord:
    """One episode of task ``task_id`` (memory type from its first letter, T/S/O/P).

    ``ops``: one letter per checkpoint (``s``/``u``/``c``, upper case = required,
    lower case = optional); the first ``done`` complete, at steps 10, 20, ....
    ``success`` defaults to "every required checkpoint completed" (and status ok).
    An ``end_reason`` of ``"violation"`` or ``"extra_pour"`` records a violation at
    the last step, which also makes ``stages_complete`` false. ``binding``: the episode's
    binding (none by default).
    """
    cps = [
        CheckpointResult(
            index=i,
            op=_OPS[ch.lower()],
            optional=ch.islower(),
            completed=i < done,
            step=10 * (i + 1) if i < done else None,
        )
        for i, ch in enumerate(ops)
    ]
    required = [c for c in cps if not c.optional]
    required_done = all(c.completed for c in required)
    if success is None:
        success = required_done and status == "ok" and end_reason in (None, "success")
    end_reason = end_reason or ("success" if success else "horizon")
    if status != "ok":
        end_reason = status
    violation = Violation(name=end_reason, step=steps - 1) if end_reason in _VIOLATIONS else None
    stages = required_done and violation is None
    return EpisodeRecord(
        task_id=task_id,
        memory_type=FAMILY[task_id[0]],
        episode=episode,
        seed=seed_base + episode,
        status=EpisodeStatus(status),
        success=success,
        failure_class=classify_failure(success, EpisodeStatus(status), end_reason, cps),
        end_reason=end_reason,
        checkpoints=cps,
        violation=violation,
        stage_score=sum(c.completed for c in required) / len(required),
        stages_complete=stages,
        average_score=sum(c.completed for c in cps) / len(cps),
        steps=steps,
        binding=binding or {},
    )


def write_run(
    folder: Path,
    records: Iterable[EpisodeRecord],
    policy: str = "expert",
    replan_steps: int = 5,
    memory_oracle: str | None = None,
    seed: int = 7,
    adapter_kwargs: dict | None = None,
) -> Path:
    """Write a run folder like ``memobench eval`` does (run.json and ledger.jsonl); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    records = list(records)
    protocol = Protocol(seed=seed, replan_steps=replan_steps, memory_oracle=memory_oracle)
    manifest = {
        "created": "2026-01-01T00:00:00+00:00",
        "protocol": protocol.model_dump(mode="json"),
        "policy": {"name": policy, "adapter_kwargs": adapter_kwargs or {}},
        "tasks": {tid: "synthetic" for tid in sorted({r.task_id for r in records})},
        "num_trials_per_task": max((r.episode + 1 for r in records), default=0),
        "video": "none",
        "versions": {"memobench": "synthetic"},
    }
    (folder / RUN_JSON).write_text(json.dumps(manifest, indent=2) + "\n")
    (folder / LEDGER_FILENAME).write_text("".join(r.to_json_line() + "\n" for r in records))
    return folder


# A small suite shape: (task id, checkpoint ops); used by the benchmark and tests.
SUITE_SHAPE: tuple[tuple[str, str], ...] = (
    ("T01-a", "SU"),
    ("T02-b", "SUU"),
    ("T03-c", "SSSU"),
    ("T04-d", "SU"),
    ("T05-e", "SUU"),
    ("T06-f", "SU"),
    ("T07-g", "SUU"),
    ("T08-h", "SUS"),
    ("T09-i", "SUC"),
    ("T10-j", "SUCU"),
    ("S01-a", "SU"),
    ("S02-b", "SU"),
    ("S03-c", "SU"),
    ("S04-d", "SUu"),
    ("S05-e", "SU"),
    ("S06-f", "SSU"),
    ("S09-g", "SSUU"),
    ("O01-a", "SU"),
    ("O02-b", "SU"),
    ("O03-c", "SSU"),
    ("O04-d", "SSU"),
    ("O05-e", "SUC"),
    ("P01-a", "SSC"),
    ("P02-b", "SSSC"),
    ("P04-c", "SSSS"),
)


def synthetic_runs(
    root: Path,
    conditions: Sequence[tuple[str, int, str | None]],
    episodes: int,
    rng: np.random.Generator,
    tasks: Sequence[tuple[str, str]] = SUITE_SHAPE,
) -> list[Path]:
    """One run folder per (policy, replan_steps, memory_oracle) under ``root``, ``episodes`` per task.

    Each checkpoint completes with a per-condition probability (so conditions differ); the
    same seeds are used by every condition so runs pair up.
    """
    folders = []
    for c, (policy, k, oracle) in enumerate(conditions):
        p = 0.55 + 0.4 * rng.random() if c else 0.97
        records = []
        for task_id, ops in tasks:
            for e in range(episodes):
                done = 0
                while done < len(ops) and rng.random() < p:
                    done += 1
                records.append(record(task_id, e, ops, done, steps=int(rng.integers(50, 1200))))
        name = f"{policy}-r{k}" + (f"-oracle-{oracle}" if oracle else "")
        folders.append(write_run(root / name, records, policy, k, oracle))
    return folders
