"""Memory-necessity certification: the expert must solve a task, the memoryless expert must not.

Both experts run on the same seeds, camera-free, each into its own run folder
(``<out_root>/expert``, ``<out_root>/expert-memoryless``; resumable like any
run). A task passes when the expert's success rate is at least
:data:`EXPERT_MIN_SR` and the memoryless expert's is at most the task's
chance level plus :data:`MEMORYLESS_MARGIN`: the task is solvable, and
solving it takes memory.

The memoryless expert runs on more seeds than the expert (by default
:data:`MEMORYLESS_EPISODES`; its seeds start at the same base, so they include
the expert's). Its success rate is an estimate of a guessing rate, and the
margin only means something if the estimate is finer than the margin: over 20
episodes its standard deviation at chance 1/2 is 11 points, and an exact
guesser exceeds chance + 10 points in 13% of tasks (19% at chance 1/3); over
100 it is 5 points and about 2%.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from memobench.evaluation.protocol import Protocol
from memobench.evaluation.records import EpisodeRecord
from memobench.metrics.rates import Rate
from memobench.suite import Task

EXPERT_MIN_SR = 0.95
MEMORYLESS_MARGIN = 0.10
MEMORYLESS_EPISODES = 100
POLICIES = ("expert", "expert-memoryless")
# Below this p(luck) the memoryless expert beats the stated chance level by more than luck explains:
# the level is probably too low. Several levels rest on how many blind tries fit in the horizon,
# which a faster skill raises (T03's did), so certification points them out, pass or fail.
LOW_CHANCE_P = 0.05
# In a Markdown file written by ``certify --markdown``: what follows this line is written by hand,
# and regenerating the table keeps it (:func:`keep_hand_notes`).
NOTES_MARKER = "<!-- Written by hand from here on: `memobench certify --markdown` keeps it when it regenerates the table. -->"


def memoryless_episode_count(episodes: int, requested: int | None = None) -> int:
    """Memoryless episodes per task: ``requested`` (default :data:`MEMORYLESS_EPISODES`), never fewer than ``episodes``."""
    return max(episodes, MEMORYLESS_EPISODES if requested is None else requested)


@dataclass(frozen=True)
class Certificate:
    """One task's verdict and the numbers behind it."""

    task_id: str
    memory_type: str
    chance: float
    expert: Rate
    memoryless: Rate
    # How the memoryless expert's failed episodes failed (failure class -> episodes): the
    # evidence that it fails for the memory reason, not by fumbling the manipulation.
    memoryless_failures: dict[str, int] = field(default_factory=dict)
    # Seconds the task's episodes took (both experts, summed over workers and resumed runs).
    episode_seconds: float = 0.0

    @property
    def problems(self) -> list[str]:
        out = []
        if not self.expert.defined or self.expert.value < EXPERT_MIN_SR:
            out.append(f"expert SR {_pct(self.expert)} < {EXPERT_MIN_SR:.0%}")
        limit = self.chance + MEMORYLESS_MARGIN
        if not self.memoryless.defined or self.memoryless.value > limit + 1e-9:
            out.append(f"memoryless SR {_pct(self.memoryless)} > chance {self.chance:.1%} + "
                       f"{MEMORYLESS_MARGIN * 100:.0f} points")
        return out

    @property
    def p_above_chance(self) -> float | None:
        """One-sided binomial p-value of the memoryless successes if its true rate were ``chance``.

        Not part of the verdict (the rule above is): it says whether a failing
        memoryless rate is evidence of a leak or plausibly luck at this many episodes.
        """
        if not self.memoryless.defined:
            return None
        return binomial_tail(self.memoryless.k, self.memoryless.n, self.chance)

    @property
    def chance_looks_low(self) -> bool:
        """The memoryless expert's successes are unlikely (p < :data:`LOW_CHANCE_P`) at the stated chance level."""
        p = self.p_above_chance
        return p is not None and p < LOW_CHANCE_P

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail: " + "; ".join(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "memory_type": self.memory_type, "chance": self.chance,
            "expert_sr": self.expert.to_dict(), "memoryless_sr": self.memoryless.to_dict(),
            "memoryless_p_above_chance": self.p_above_chance, "memoryless_failures": self.memoryless_failures,
            "episode_seconds": round(self.episode_seconds, 1),
            "passed": self.passed, "verdict": self.verdict,
        }


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return float(sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def _pct(rate: Rate) -> str:
    return "-" if not rate.defined else f"{rate.value:.0%}"


def _records(records: Iterable[EpisodeRecord], task_id: str, episodes: int | None) -> list[EpisodeRecord]:
    return [r for r in records if r.task_id == task_id and (episodes is None or r.episode < episodes)]


def _success_rate(records: list[EpisodeRecord]) -> Rate:
    return Rate(sum(r.success for r in records), len(records))


def _failures(records: list[EpisodeRecord]) -> dict[str, int]:
    return dict(sorted(Counter(str(r.failure_class.value) for r in records if r.failure_class).items()))


def certificates(tasks: list[Task], expert: list[EpisodeRecord], memoryless: list[EpisodeRecord],
                 episodes: int | None = None, memoryless_episodes: int | None = None) -> list[Certificate]:
    """Verdicts from the expert's records of episodes ``0..episodes-1`` and the memoryless
    expert's of ``0..memoryless_episodes-1`` (default: as many; errors count as failures)."""
    blind_episodes = memoryless_episodes if memoryless_episodes is not None else episodes
    certs = []
    for t in tasks:
        mine, blind = _records(expert, t.id, episodes), _records(memoryless, t.id, blind_episodes)
        seconds = sum(r.timings.get("total", 0.0) for r in mine + blind)
        certs.append(Certificate(t.id, t.spec.family.value, t.spec.chance, _success_rate(mine),
                                 _success_rate(blind), _failures(blind), seconds))
    return certs


def write_certificates(certs: list[Certificate], out_root: Path, meta: dict[str, Any]) -> None:
    """``certification.json`` (with the run settings) and ``certification.csv``."""
    out_root.mkdir(parents=True, exist_ok=True)
    doc = {**meta, "rule": {"expert_min_sr": EXPERT_MIN_SR, "memoryless_margin": MEMORYLESS_MARGIN},
           "passed": all(c.passed for c in certs), "tasks": [c.to_dict() for c in certs]}
    (out_root / "certification.json").write_text(json.dumps(doc, indent=2) + "\n")
    with open(out_root / "certification.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["task_id", "memory_type", "episodes", "expert_sr", "memoryless_sr", "chance",
                         "memoryless_p_above_chance", "verdict"])
        for c in certs:
            p = "" if c.p_above_chance is None else f"{c.p_above_chance:.4f}"
            writer.writerow([c.task_id, c.memory_type, c.expert.n, f"{c.expert.value:.4f}",
                             f"{c.memoryless.value:.4f}", f"{c.chance:.4f}", p, c.verdict])


def certification_markdown(certs: list[Certificate], meta: dict[str, Any]) -> str:
    """The certification table as Markdown (``docs/certification.md``), with the rule and settings."""
    passed = sum(c.passed for c in certs)
    seed, episodes = meta.get("seed", 0), meta.get("episodes", 1)
    blind = meta.get("memoryless_episodes", episodes)
    lines = [
        "# MEMOBench memory-necessity certification",
        "",
        f"Generated by `{meta.get('command', 'memobench certify')}`"
        + (f" on {meta['date']}." if meta.get("date") else ".")
        + (f" The episodes took {sum(c.episode_seconds for c in certs) / 3600:.1f} h in all, summed over workers "
           "and over every invocation of the resumed run." if any(c.episode_seconds for c in certs) else ""),
        f"Per task, {episodes} expert episodes (seeds {seed}..{seed + episodes - 1}) and {blind} memoryless ones "
        f"(seeds {seed}..{seed + blind - 1}), replan interval {meta.get('replan_steps')}, camera-free.",
        "",
        f"Rule: a task passes when the expert succeeds in at least {EXPERT_MIN_SR:.0%} of its episodes and the "
        f"memoryless expert (the same plan with its memory cleared before every decision, guessing uniformly "
        f"where the scene leaves a choice open) in at most the task's chance level + "
        f"{MEMORYLESS_MARGIN * 100:.0f} points."
        + (" The memoryless expert runs more episodes: its rate is held to that margin, so it must be measured "
           "finer than the margin." if blind > episodes else "")
        + " p(luck) is the chance of the memoryless successes or more if its true rate were the chance level "
        "(not part of the verdict). The last column says how the memoryless episodes failed (PROTOCOL.md "
        "failure taxonomy).",
        "",
        f"**{passed}/{len(certs)} tasks pass.**",
        "",
        *_low_chance_lines(certs),
        "| task | memory | expert SR | memoryless SR | chance | p(luck) | verdict | memoryless failures |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in certs:
        luck = "-" if c.p_above_chance is None else f"{c.p_above_chance:.2f}"
        verdict = "pass" if c.passed else "**FAIL**: " + "; ".join(c.problems)
        failures = _named_counts(c.memoryless_failures)
        lines.append(f"| {c.task_id} | {c.memory_type} | {c.expert.k}/{c.expert.n} ({_pct(c.expert)}) | "
                     f"{c.memoryless.k}/{c.memoryless.n} ({_pct(c.memoryless)}) | {c.chance:.1%} | {luck} | "
                     f"{verdict} | {failures} |")
    return "\n".join(lines + _memory_type_lines(certs)) + "\n"


def _memory_type_lines(certs: list[Certificate]) -> list[str]:
    """Per memory type: verdicts, the memoryless successes pooled against what chance predicts, and how
    its episodes failed. Pooled, a leak too small to fail any one task still shows as an excess."""
    lines = ["", "By memory type (memoryless successes against the sum of each task's chance x episodes, "
             "± one binomial standard deviation):", "",
             "| memory | tasks passing | memoryless successes | expected at chance | memoryless failures |",
             "|---|---|---|---|---|"]
    for memory_type in dict.fromkeys(c.memory_type for c in certs):
        of_type = [c for c in certs if c.memory_type == memory_type]
        group = [c for c in of_type if c.memoryless.defined]
        expected = sum(c.chance * c.memoryless.n for c in group)
        sd = math.sqrt(sum(c.chance * (1 - c.chance) * c.memoryless.n for c in group))
        failures: Counter[str] = Counter()
        for c in group:
            failures.update(c.memoryless_failures)
        lines.append(f"| {memory_type} | {sum(c.passed for c in of_type)}/{len(of_type)} | "
                     f"{sum(c.memoryless.k for c in group)}/{sum(c.memoryless.n for c in group)} | "
                     f"{expected:.1f} ± {sd:.1f} | {_named_counts(failures)} |")
    return lines


def _named_counts(counts: dict[str, int]) -> str:
    """``{"late_stale": 3, "over_execution": 1}`` -> ``"late_stale 3, over_execution 1"`` (``-`` if empty)."""
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def _low_chance_lines(certs: list[Certificate]) -> list[str]:
    low = [c for c in certs if c.chance_looks_low]
    if not low:
        return []
    named = ", ".join(f"{c.task_id} (p(luck) {c.p_above_chance:.3f})" for c in low)
    return [f"**Chance levels to re-check:** {named}. The memoryless expert succeeded more often than its chance "
            f"level explains (p(luck) < {LOW_CHANCE_P}), so the stated level is probably too low, whatever the "
            "verdict.", ""]


def keep_hand_notes(generated: str, previous: str | None) -> str:
    """``generated``, followed by ``previous`` from :data:`NOTES_MARKER` on (nothing if it has no marker)."""
    if previous is None or NOTES_MARKER not in previous:
        return generated
    return generated.rstrip("\n") + "\n\n" + previous[previous.index(NOTES_MARKER):]


def run_certification(tasks: list[Task], episodes: int, protocol: Protocol, out_root: Path,
                      console: Console | None = None, workers: int = 1,
                      memoryless_episodes: int | None = None) -> list[Certificate]:
    """Run both experts on ``tasks`` (resuming what is already in ``out_root``) and judge each task.

    The memoryless expert runs :func:`memoryless_episode_count` episodes."""
    from memobench.evaluation.runner import RunRequest, evaluate
    from memobench.policies.loader import build_adapter, builtin_spec

    blind = memoryless_episode_count(episodes, memoryless_episodes)
    trials = {"expert": episodes, "expert-memoryless": blind}
    ledgers: dict[str, list[EpisodeRecord]] = {}
    for name in POLICIES:
        if console:
            console.print(f"[bold]{name}[/] ({trials[name]} episodes per task)")
        request = RunRequest(tasks=tasks, num_trials_per_task=trials[name], protocol=protocol,
                             out_root=out_root / name, policy={"name": name, "adapter_kwargs": {}}, resume=True,
                             workers=workers)
        evaluate(request, build_adapter(builtin_spec(name)), console=console)
        ledgers[name] = _read_ledger(out_root / name)
    certs = certificates(tasks, ledgers["expert"], ledgers["expert-memoryless"], episodes, blind)
    write_certificates(certs, out_root, {"episodes": episodes, "memoryless_episodes": blind, "seed": protocol.seed,
                                         "replan_steps": protocol.replan_steps})
    return certs


def _read_ledger(folder: Path) -> list[EpisodeRecord]:
    from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger

    with Ledger(folder / LEDGER_FILENAME) as ledger:
        return ledger.records()
