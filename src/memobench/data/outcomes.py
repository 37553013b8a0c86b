"""Which collection attempts failed, so a collection made again can skip them.

Attempts are deterministic by seed (:mod:`memobench.data.collect`): the same task spec, seed
base and action noise give the same outcome for attempt ``a`` on any machine. A finished
collection therefore tells which of its attempts failed (those not among its demos), and a
collection of the same demos made again, on a machine that did not keep them, can journal
those attempts as failures without simulating them: the same file, less time (722 of the
perturbed collection's 2,222 attempts failed).

The outcomes file (JSON, small enough to commit) holds, per task, the spec hash, seed base
and action noise it is valid for, the attempts made and the failed ones, and a digest of the
kept demos' content (:func:`demos_digest`): a collection made again with the file checks that
it made the same demos, so determinism across machines is checked, not assumed. It is
untrusted input: read through :class:`OutcomesFile`, and used for a task only when spec hash,
seed base and noise match.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

FORMAT = "memobench-attempt-outcomes/1"


class OutcomesError(ValueError):
    """An outcomes file that cannot be read or used (the message names the file and field)."""


class TaskOutcomes(BaseModel):
    """One task's collection: what it is valid for, its attempts and the failed ones."""

    model_config = ConfigDict(extra="forbid")

    spec_hash: str
    seed_base: int
    action_noise: float = Field(ge=0.0, le=1.0)
    attempts: int = Field(ge=0)
    failed: list[int]
    # None in files written before it existed: nothing to check then
    demos_digest: str | None = Field(None, pattern="^[0-9a-f]{16}$")

    @model_validator(mode="after")
    def _failed_are_attempts(self) -> TaskOutcomes:
        if any(not 0 <= a < self.attempts for a in self.failed):
            raise ValueError(f"failed attempts must lie in 0..{self.attempts - 1}")
        if len(set(self.failed)) != len(self.failed):
            raise ValueError("failed attempts repeat")
        return self


class OutcomesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal[FORMAT] = FORMAT
    tasks: dict[str, TaskOutcomes]


def outcomes_of_folder(folder: Path) -> OutcomesFile:
    """The outcomes of every finished task file (``<task_id>.hdf5``) in ``folder``: its attempts
    minus its demos' ``attempt`` attributes."""
    from memobench.data.demo_file import iter_demos, read_file_summary

    tasks = {}
    for path in sorted(Path(folder).glob("*.hdf5")):
        try:
            attrs, _ = read_file_summary(path)
            kept = {int(demo.attrs["attempt"]) for demo in iter_demos(path, arrays=False)}
            attempts = int(attrs["attempts"])
            tasks[str(attrs["task_id"])] = TaskOutcomes(
                spec_hash=attrs["spec_hash"],
                seed_base=int(attrs["seed_base"]),
                action_noise=float(attrs.get("action_noise", 0.0)),
                attempts=attempts,
                failed=sorted(set(range(attempts)) - kept),
                demos_digest=demos_digest(path),
            )
        except (KeyError, TypeError, ValueError, OSError) as e:  # ValidationError is a ValueError
            raise OutcomesError(f"{path}: not a finished collection's task file ({type(e).__name__}: {e})") from None
    return OutcomesFile(tasks=tasks)


# What a demo's content is, for the digest: its attempt and the arrays the simulation produced
# (not images, which `data render` adds later).
DIGEST_ARRAYS = ("actions", "executed_actions", "states", "robot_states")


def demos_digest(path: Path) -> str:
    """SHA-256 (16 hex digits) of a task file's demos in order: each one's attempt and arrays
    :data:`DIGEST_ARRAYS` (those it has), bytes as stored."""
    import hashlib

    from memobench.data.demo_file import iter_demos

    digest = hashlib.sha256()
    for demo in iter_demos(path, images=False):
        digest.update(f"attempt {int(demo.attrs['attempt'])}\n".encode())
        for key in DIGEST_ARRAYS:
            if key in demo.arrays:
                array = demo.arrays[key]
                digest.update(f"{key} {array.dtype.str} {array.shape}\n".encode())
                digest.update(array.tobytes())
    return digest.hexdigest()[:16]


def unreproduced(outcomes: OutcomesFile, folder: Path, task_ids: list[str]) -> list[str]:
    """A line for each task of ``task_ids`` whose file in ``folder`` holds other demos than the
    collection ``outcomes`` records (by :func:`demos_digest`; tasks without a digest are not checked)."""
    lines = []
    for task_id in task_ids:
        entry = outcomes.tasks.get(task_id)
        if entry is not None and entry.demos_digest is not None:
            got = demos_digest(Path(folder) / f"{task_id}.hdf5")
            if got != entry.demos_digest:
                lines.append(f"{task_id}: demos digest {got}, the recorded collection's {entry.demos_digest}")
    return lines


def updated(earlier: OutcomesFile, newer: OutcomesFile) -> OutcomesFile:
    """``earlier``'s tasks with ``newer``'s added or put in their place (a collection made in parts)."""
    return OutcomesFile(tasks=dict(sorted({**earlier.tasks, **newer.tasks}.items())))


def write_outcomes(outcomes: OutcomesFile, path: str | os.PathLike[str]) -> None:
    """Write (or replace, atomically: a full disk leaves the old file whole) the outcomes file ``path``."""
    from memobench.evaluation.atomic_file import atomic_write_text

    atomic_write_text(Path(path), json.dumps(outcomes.model_dump(mode="json"), indent=1) + "\n")


def load_outcomes(path: str | os.PathLike[str]) -> OutcomesFile:
    """Read an outcomes file; :class:`OutcomesError` naming the file and the field if it is not one."""
    try:
        return OutcomesFile.model_validate_json(Path(path).read_bytes())
    except OSError as e:
        raise OutcomesError(f"{path}: cannot read it ({e.strerror or type(e).__name__})") from None
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(the file)"
        raise OutcomesError(f"{path}: {field}: {first['msg']}") from None


def known_failures(
    outcomes: OutcomesFile, path: str | os.PathLike[str], task, seed_base: int, action_noise: float
) -> frozenset[int]:
    """The attempts of ``task`` known to fail in a collection with ``seed_base`` and ``action_noise``
    (none when the file does not list the task). :class:`OutcomesError` when it lists the task for
    another spec, seed base or noise: its outcomes say nothing about this collection."""
    entry = outcomes.tasks.get(task.id)
    if entry is None:
        return frozenset()
    for field, have, want in (
        ("spec_hash", entry.spec_hash, task.spec_hash),
        ("seed_base", entry.seed_base, seed_base),
        ("action_noise", entry.action_noise, float(action_noise)),
    ):
        if have != want:
            raise OutcomesError(
                f"{path}: tasks.{task.id}.{field} is {have!r}, this collection's is {want!r}: "
                "its outcomes are another collection's (drop --known-outcomes or remake the file)"
            )
    return frozenset(entry.failed)
