"""Memory-necessity certification: the experts must solve a task, every memoryless policy must not.

Seven built-in policies run on the same seeds, camera-free, each into its own
run folder (``<out_root>/<policy>``; resumable like any run):

- ``expert`` and ``expert-slow`` (the expert taking twice its steps, the stand-in for a
  slower learned policy) must succeed in at least :data:`EXPERT_MIN_SR` and
  :data:`SLOW_MIN_SR` of their episodes: the task is solvable, and not only
  at the scripted expert's speed;
- ``expert-memoryless`` (guesses uniformly where the scene is ambiguous) and
  ``expert-reactive`` (deterministic, acts on what the scene shows) must each
  stay at most :data:`MEMORYLESS_MARGIN` above the task's chance level:
  solving it takes memory;
- so must the adversaries, memoryless policies that try to pass by exploiting
  the rules: ``adversary-slow`` (a redo long after the goal), ``adversary-arm``
  (memory stored in the arm's pose), ``adversary-state`` (history read out of
  every number of the state observation) and ``adversary-scene`` (memory kept in an
  object it shoved off its place).

Each policy has its own episode count (:func:`episode_counts`; all start at the
same seed, so each includes the experts'). The memoryless expert runs the most:
its rate estimates a guessing rate, and the margin only means something if the
estimate is finer than the margin: over 20 episodes its standard deviation at
chance 1/2 is 11 points, and an exact guesser exceeds chance + 10 points in 13%
of tasks (19% at chance 1/3); over 50 about 6%, over 100 about 2%. The reactive
expert and ``adversary-slow`` are deterministic given the layout (30 each);
``adversary-arm`` guesses where a gate wipes its memory (50); ``adversary-state`` is
deterministic given the layout (30); ``adversary-scene`` guesses only where its shove
fails to move anything (30).
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

from memobench.core.records import EpisodeRecord
from memobench.core.spec import ARENA_SUITE
from memobench.core.suite import Task
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_events import RunEvents
from memobench.metrics.rates import Rate

EXPERT_MIN_SR = 0.95
SLOW_MIN_SR = 0.90
MEMORYLESS_MARGIN = 0.10
MEMORYLESS_EPISODES = 100
REACTIVE_EPISODES = 30
# adversary-slow is the reactive expert slowed down (deterministic given the layout, as the reactive
# one); adversary-arm guesses like the memoryless expert wherever a gate wipes its memory;
# adversary-state is deterministic given the layout (its table's nearest neighbour decides);
# adversary-scene guesses only after a shove that moved nothing
ADVERSARY_EPISODES = {"adversary-slow": 30, "adversary-arm": 50, "adversary-state": 30, "adversary-scene": 30}
SOLVERS: dict[str, float] = {"expert": EXPERT_MIN_SR, "expert-slow": SLOW_MIN_SR}  # policy -> least SR
ADVERSARIES = ("adversary-slow", "adversary-arm", "adversary-state", "adversary-scene")
BLIND = ("expert-memoryless", "expert-reactive", *ADVERSARIES)  # each held to chance + MEMORYLESS_MARGIN
POLICIES = (*SOLVERS, *BLIND)
SHORT = {
    "expert": "expert",
    "expert-slow": "slow",
    "expert-memoryless": "memoryless",
    "expert-reactive": "reactive",
    "adversary-slow": "adv-slow",
    "adversary-arm": "adv-arm",
    "adversary-state": "adv-state",
    "adversary-scene": "adv-scene",
}
# Below this p(luck) a memoryless baseline beats the stated chance level by more than luck explains:
# the level is probably too low. Certification points such tasks out, pass or fail.
LOW_CHANCE_P = 0.05
# In a Markdown file written by ``certify --markdown``: what follows this line is written by hand,
# and regenerating the table keeps it (:func:`keep_hand_notes`).
NOTES_MARKER = (
    "<!-- Written by hand from here on: `memobench certify --markdown` keeps it when it regenerates the table. -->"
)


def episode_counts(
    episodes: int, memoryless: int | None = None, reactive: int | None = None, adversaries: int | None = None
) -> dict[str, int]:
    """Episodes per task of each policy of :data:`POLICIES`: ``episodes`` for the expert and the
    slow expert; ``memoryless`` (default :data:`MEMORYLESS_EPISODES`), ``reactive``
    (:data:`REACTIVE_EPISODES`) and ``adversaries`` (each; default :data:`ADVERSARY_EPISODES`)
    for the memoryless policies, never fewer than ``episodes``."""
    asked = {
        "expert-memoryless": MEMORYLESS_EPISODES if memoryless is None else memoryless,
        "expert-reactive": REACTIVE_EPISODES if reactive is None else reactive,
        **{p: ADVERSARY_EPISODES[p] if adversaries is None else adversaries for p in ADVERSARIES},
    }
    return {**{p: episodes for p in SOLVERS}, **{p: max(episodes, asked[p]) for p in BLIND}}


@dataclass(frozen=True)
class Certificate:
    """One task's verdict and the numbers behind it.

    ``rates`` maps each policy of :data:`POLICIES` to its success rate over the
    episodes it has run; ``required`` says how many each must have run to be judged
    (a policy short of them, or missing, leaves the task pending: a partial rate can
    still move either side of the rule); ``failures`` maps each
    memoryless baseline to how its failed episodes failed (failure class ->
    episodes): the evidence that it fails for the memory reason, not by fumbling
    the manipulation.
    """

    task_id: str
    memory_type: str
    chance: float
    rates: dict[str, Rate]
    failures: dict[str, dict[str, int]] = field(default_factory=dict)
    # Seconds the task's counted episodes took (all policies, summed over workers and resumed runs).
    episode_seconds: float = 0.0
    # Episodes each policy must have run before it is judged (policy -> count; absent: one).
    required: dict[str, int] = field(default_factory=dict)

    def rate(self, policy: str) -> Rate:
        return self.rates.get(policy, Rate(0, 0))

    def complete(self, policy: str) -> bool:
        """Whether ``policy`` has run all the episodes of this task it is judged on."""
        return self.rate(policy).n >= max(1, self.required.get(policy, 1))

    @property
    def pending(self) -> list[str]:
        """Policies that have not run all their episodes of this task yet (a run in progress):
        no verdict without them."""
        return [p for p in POLICIES if not self.complete(p)]

    @property
    def problems(self) -> list[str]:
        """How the policies that ran all their episodes break the rule (empty: none does)."""
        out = []
        for policy, least in SOLVERS.items():
            r = self.rate(policy)
            if self.complete(policy) and r.value < least - 1e-9:
                out.append(f"{policy} SR {_pct(r)} < {least:.0%}")
        limit = self.chance + MEMORYLESS_MARGIN
        for policy in BLIND:
            r = self.rate(policy)
            if self.complete(policy) and r.value > limit + 1e-9:
                out.append(f"{policy} SR {_pct(r)} > chance {self.chance:.1%} + {MEMORYLESS_MARGIN * 100:.0f} points")
        return out

    def p_above_chance(self, policy: str) -> float | None:
        """One-sided binomial p-value of ``policy``'s successes if its true rate were ``chance``.

        Not part of the verdict (the rule above is): it says whether a failing
        memoryless rate is evidence of a leak or plausibly luck at this many episodes.
        """
        r = self.rate(policy)
        return binomial_tail(r.k, r.n, self.chance) if r.defined else None

    @property
    def low_chance_baselines(self) -> list[str]:
        """Memoryless baselines whose successes are unlikely (p < :data:`LOW_CHANCE_P`) at the stated level."""
        return [p for p in BLIND if (v := self.p_above_chance(p)) is not None and v < LOW_CHANCE_P]

    @property
    def memory_testable(self) -> bool:
        """Whether the rule can show that the task needs memory: a chance level within
        :data:`MEMORYLESS_MARGIN` of 1 lets any memoryless rate through (most RoboMemArena
        tasks: their task files derive chance 1)."""
        return self.chance + MEMORYLESS_MARGIN < 1 - 1e-9

    @property
    def passed(self) -> bool:
        """Certified to need memory: every policy ran, none breaks the rule, and the rule could fail."""
        return not self.problems and not self.pending and self.memory_testable

    @property
    def verdict(self) -> str:
        """``pass``, ``fail: <problems>`` (a complete policy that breaks the rule is
        reported first: more episodes of the others cannot undo it), ``pending: ...``
        (which policies have run some of their episodes, which none) or ``no memory
        needed: ...`` (the experts pass, but the chance level leaves the memoryless
        baselines nothing to fail: a memoryless strategy does as well)."""
        if self.problems:
            return "fail: " + "; ".join(self.problems)
        if self.pending:
            return "pending: " + self._pending_text()
        if not self.memory_testable:
            return f"no memory needed: chance level {self.chance:.0%} (the task file derives it)"
        return "pass"

    def _pending_text(self) -> str:
        """The pending policies: how far those that started are, then those that did not."""
        parts, idle = [], []
        for policy in self.pending:
            if n := self.rate(policy).n:
                parts.append(f"{SHORT[policy]} at {n}/{self.required[policy]} episodes")
            else:
                idle.append(SHORT[policy])
        if idle:
            parts.append(", ".join(idle) + " not run yet")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "memory_type": self.memory_type,
            "chance": self.chance,
            "success_rates": {p: self.rate(p).to_dict() for p in POLICIES},
            "p_above_chance": {p: self.p_above_chance(p) for p in BLIND},
            "failures": self.failures,
            "episode_seconds": round(self.episode_seconds, 1),
            "passed": self.passed,
            "verdict": self.verdict,
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


def certificates(
    tasks: list[Task], ledgers: dict[str, list[EpisodeRecord]], counts: dict[str, int] | None = None
) -> list[Certificate]:
    """Verdicts from each policy's records (``ledgers``: policy -> records): each policy's episodes
    ``0..counts[policy]-1`` (:func:`episode_counts`). Errors count as failures; a policy absent
    from ``ledgers``, or short of its episodes, leaves the task pending (``counts`` None: every
    record counts, and one episode of each policy is enough)."""
    required = dict(counts or {})
    certs = []
    for t in tasks:
        counted = {p: _records(ledgers[p], t.id, required.get(p)) for p in POLICIES if p in ledgers}
        seconds = sum(r.timings.get("total", 0.0) for recs in counted.values() for r in recs)
        certs.append(
            Certificate(
                t.id,
                t.spec.family.value,
                t.spec.chance,
                rates={p: _success_rate(recs) for p, recs in counted.items()},
                failures={p: _failures(recs) for p, recs in counted.items() if p in BLIND},
                episode_seconds=seconds,
                required=required,
            )
        )
    return certs


def write_certificates(certs: list[Certificate], out_root: Path, meta: dict[str, Any]) -> None:
    """``certification.json`` (with the run settings) and ``certification.csv``."""
    out_root.mkdir(parents=True, exist_ok=True)
    rule = {"expert_min_sr": EXPERT_MIN_SR, "slow_min_sr": SLOW_MIN_SR, "memoryless_margin": MEMORYLESS_MARGIN}
    doc = {**meta, "rule": rule, "passed": all(c.passed for c in certs), "tasks": [c.to_dict() for c in certs]}
    (out_root / "certification.json").write_text(json.dumps(doc, indent=2) + "\n")
    with open(out_root / "certification.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "task_id",
                "memory_type",
                "chance",
                *(f"{SHORT[p]}_sr" for p in POLICIES),
                *(f"{SHORT[p]}_p_above_chance" for p in BLIND),
                "verdict",
            ]
        )
        for c in certs:
            rates = [f"{c.rate(p).value:.4f}" if c.rate(p).defined else "" for p in POLICIES]
            luck = ["" if (v := c.p_above_chance(p)) is None else f"{v:.4f}" for p in BLIND]
            writer.writerow([c.task_id, c.memory_type, f"{c.chance:.4f}", *rates, *luck, c.verdict])


def _cell(rate: Rate) -> str:
    return "-" if not rate.defined else f"{rate.k}/{rate.n} ({_pct(rate)})"


def certification_markdown(certs: list[Certificate], meta: dict[str, Any]) -> str:
    """The certification table as Markdown (``docs/certification.md``), with the rule and settings."""
    passed = sum(c.passed for c in certs)
    pending = sum(bool(c.pending) and not c.problems for c in certs)
    memoryless_ok = sum(c.verdict.startswith("no memory needed") for c in certs)
    seed, counts = meta.get("seed", 0), meta.get("episodes", {})
    per_policy = ", ".join(f"{SHORT[p]} {counts[p]}" for p in POLICIES if p in counts)
    lines = [
        "# "
        + (
            "Memory-necessity certification of RoboMemArena's tasks (the arena suite)"
            if meta.get("suite") == ARENA_SUITE
            else "MEMOBench memory-necessity certification"
        ),
        "",
        f"Generated by `{meta.get('command', 'memobench certify')}`"
        + (f" on {meta['date']}." if meta.get("date") else ".")
        + (
            f" The episodes took {sum(c.episode_seconds for c in certs) / 3600:.1f} h in all, summed over workers "
            "and over every invocation of the resumed run."
            if any(c.episode_seconds for c in certs)
            else ""
        ),
        f"Episodes per task ({per_policy}), each policy's from seed {seed} on, replan interval "
        f"{meta.get('replan_steps')}, camera-free, "
        + (f"{meta['horizon']} steps per episode" if meta.get("horizon") else "each task at its own horizon")
        + ". An episode ends "
        "early once the policy's plan is done and the scene is still (docs/protocol.md, section 2): it would hold "
        "still to the horizon with the same outcome (a failure's `end_reason` is then `policy_finished`).",
        "",
        f"Rule: a task passes when the expert succeeds in at least {EXPERT_MIN_SR:.0%} of its episodes, the slow "
        "expert (full memory, up to twice the expert's steps: after each skill that leaves its hand empty it holds "
        "still as long as the skill took) "
        f"in at least {SLOW_MIN_SR:.0%}, and *each* memoryless "
        f"policy in at most the task's chance level + {MEMORYLESS_MARGIN * 100:.0f} points: the memoryless "
        "expert (its memory cleared before every decision, guessing uniformly where the scene leaves a choice "
        "open), the reactive expert (memoryless and deterministic: it does what the current scene invites) and "
        "the adversaries, which try to pass by exploiting the rules: adv-slow (the reactive expert at a quarter "
        "speed: a redo long after the goal) and adv-arm (the expert whose memory lives in the arm's pose, wiped "
        "whenever it decides with the hand at home). The chance level is the success rate of the best memoryless "
        "strategy (each task file derives it). p(luck) is the chance of a policy's successes or more if its true "
        "rate were the chance level (not part of the verdict). The failure columns say how the memoryless "
        "policies' episodes failed (failure taxonomy of docs/protocol.md).",
        "",
        f"**{passed}/{len(certs)} tasks pass.**"
        + (f" {pending} pending: not every policy has run all its episodes on them yet." if pending else "")
        + (
            f" {memoryless_ok} need no memory: the experts solve them, and their chance level is within "
            f"{MEMORYLESS_MARGIN * 100:.0f} points of 100%, so no memoryless baseline can fail the rule."
            if memoryless_ok
            else ""
        ),
        "",
        *_low_chance_lines(certs),
        "| task | memory | "
        + " | ".join(SHORT[p] for p in POLICIES)
        + " | chance | p(luck) "
        + " / ".join(SHORT[p] for p in BLIND)
        + " | verdict | "
        + " | ".join(f"{SHORT[p]} failures" for p in BLIND)
        + " |",
        "|" + "---|" * (len(POLICIES) + len(BLIND) + 5),
    ]
    for c in certs:
        luck = " / ".join("-" if (v := c.p_above_chance(p)) is None else f"{v:.2f}" for p in BLIND)
        verdict = "**FAIL**: " + "; ".join(c.problems) if c.problems else c.verdict
        cells = [_cell(c.rate(p)) for p in POLICIES]
        failures = [_named_counts(c.failures.get(p, {})) for p in BLIND]
        lines.append(
            f"| {c.task_id} | {c.memory_type} | {' | '.join(cells)} | {c.chance:.1%} | {luck} | "
            f"{verdict} | {' | '.join(failures)} |"
        )
    return "\n".join(lines + _memory_type_lines(certs)) + "\n"


def _memory_type_lines(certs: list[Certificate]) -> list[str]:
    """Per memory type: verdicts, each baseline's successes pooled against what chance predicts, and how
    its episodes failed. Pooled, a leak too small to fail any one task still shows as an excess."""
    lines = [
        "",
        "By memory type (each baseline's successes against the sum of each task's chance x episodes, "
        "± one binomial standard deviation):",
        "",
        "| memory | tasks passing | baseline | successes | expected at chance | failures |",
        "|---|---|---|---|---|---|",
    ]
    for memory_type in dict.fromkeys(c.memory_type for c in certs):
        of_type = [c for c in certs if c.memory_type == memory_type]
        for policy in BLIND:
            group = [c for c in of_type if c.rate(policy).defined]
            expected = sum(c.chance * c.rate(policy).n for c in group)
            sd = math.sqrt(sum(c.chance * (1 - c.chance) * c.rate(policy).n for c in group))
            failures: Counter[str] = Counter()
            for c in group:
                failures.update(c.failures.get(policy, {}))
            lines.append(
                f"| {memory_type} | {sum(c.passed for c in of_type)}/{len(of_type)} | {SHORT[policy]} | "
                f"{sum(c.rate(policy).k for c in group)}/{sum(c.rate(policy).n for c in group)} | "
                f"{expected:.1f} ± {sd:.1f} | {_named_counts(failures)} |"
            )
    return lines


def _named_counts(counts: dict[str, int]) -> str:
    """``{"late_stale": 3, "over_execution": 1}`` -> ``"late_stale 3, over_execution 1"`` (``-`` if empty)."""
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def _low_chance_lines(certs: list[Certificate]) -> list[str]:
    low = [(c, p) for c in certs for p in c.low_chance_baselines]
    if not low:
        return []
    named = ", ".join(f"{c.task_id} ({SHORT[p]}, p(luck) {c.p_above_chance(p):.3f})" for c, p in low)
    return [
        f"**Chance levels to re-check:** {named}. A memoryless baseline succeeded more often than its "
        f"chance level explains (p(luck) < {LOW_CHANCE_P}), so the stated level is probably too low, whatever "
        "the verdict.",
        "",
    ]


def write_certification_markdown(certs: list[Certificate], meta: dict[str, Any], paths: list[Path]) -> None:
    """The certification's Markdown into each of ``paths``, keeping each file's hand-written notes."""
    text = certification_markdown(certs, meta)
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(keep_hand_notes(text, path.read_text() if path.exists() else None))


def keep_hand_notes(generated: str, previous: str | None) -> str:
    """``generated``, followed by ``previous`` from :data:`NOTES_MARKER` on (nothing if it has no marker)."""
    if previous is None or NOTES_MARKER not in previous:
        return generated
    return generated.rstrip("\n") + "\n\n" + previous[previous.index(NOTES_MARKER) :]


class CertificationEvents(RunEvents):
    """What :func:`run_certification` reports: each policy's run as it starts, then that
    run's events. Every method does nothing here; the CLI draws them."""

    def policy_started(self, policy: str, episodes_per_task: int) -> None:
        """``policy`` is about to run ``episodes_per_task`` episodes per task (some may be done)."""


def run_certification(
    tasks: list[Task],
    counts: dict[str, int],
    protocol: Protocol,
    out_root: Path,
    events: CertificationEvents | None = None,
    execution: Execution | None = None,
    run: bool = True,
) -> list[Certificate]:
    """Run the policies of :data:`POLICIES` on ``tasks`` (resuming what is already in
    ``out_root``) and judge each task.

    Each policy runs ``counts[policy]`` episodes per task (:func:`episode_counts`).
    ``execution`` says where episodes run (workers, backend, retries; its video, out-root
    and resume settings are not used: each policy's run resumes in ``out_root/<policy>``,
    without videos). With ``run=False`` no episode
    runs: the verdicts come from the records already in ``out_root`` (a task whose
    policies have not all run their episodes is pending)."""
    from memobench.evaluation.run_request import RunRequest
    from memobench.evaluation.runner import evaluate
    from memobench.metrics.export import write_summary
    from memobench.policies.loader import build_adapter, builtin_spec

    events = events or CertificationEvents()
    fields = (execution or Execution()).request_fields()
    ledgers: dict[str, list[EpisodeRecord]] = {}
    for name in POLICIES:
        trials = counts[name]
        if run:
            events.policy_started(name, trials)
            # A scripted policy whose plan is done (or has given up) holds still until the horizon:
            # its episodes end once the scene is still too, with the outcome they would have at
            # the horizon (docs/protocol.md, "End"), in a fraction of the time.
            policy_protocol = protocol.model_copy(update={"end_when_finished": True})
            request = RunRequest(
                tasks=tasks,
                num_trials_per_task=trials,
                protocol=policy_protocol,
                out_root=out_root / name,
                policy={"name": name, "adapter_kwargs": {}},
                **{**fields, "resume": True, "video": "none", "video_every": 0},
            )
            result = evaluate(request, build_adapter(builtin_spec(name)), events)
            write_summary(result.records, request.out_root)
        ledgers[name] = _read_ledger(out_root / name)
    certs = certificates(tasks, ledgers, counts)
    write_certificates(
        certs,
        out_root,
        {
            "episodes": counts,
            "seed": protocol.seed,
            "replan_steps": protocol.replan_steps,
        },
    )
    return certs


def _read_ledger(folder: Path) -> list[EpisodeRecord]:
    from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger

    if not (folder / LEDGER_FILENAME).exists():
        return []
    with Ledger(folder / LEDGER_FILENAME) as ledger:
        return ledger.records()
