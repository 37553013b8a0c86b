"""One expert episode of a task through the harness: the helper of the test_expert_episodes_* files.

The tasks outside tests/sim/test_experts.py's pilots are split over several files by family
because `make test` hands each file to one worker (`--dist loadfile`): in one file their
~30 episodes made the longest file the suite's wall time.
"""

from __future__ import annotations

from memobench.core.suite import Suite
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.experts.plans import plans
from memobench.policies.loader import build_adapter, builtin_spec

# Determinism and replan invariance are checked on these (tests/sim/test_experts.py);
# every other task with a plan gets one expert episode.
PILOTS = [
    "O01-cued-milk",
    "P04-stack-in-order",
    "S01-hide-and-retrieve-butter",
    "T03-check-all-drawers",
    "T09-pour-twice-bowl",
]
# The arena's 26 plans share six modules; one episode of a task per module and grasp (each
# arena plan's decisions are tested without a simulator in tests/experts/test_arena_*.py),
# to keep `make test` short: arena episodes run 500-1,200 steps.
ARENA_SAMPLE = [
    "A01-cookies-tomato-basket",  # basket_sequence
    "A06-pour-tomato-sauce-into-bowl-drainer",  # arena_pour, grasped from above
    "A10-pour-wine-bottle-into-mug",  # arena_pour, held from the side
    "A12-cookies-chocolate-middle-drawer",  # arena_drawers
    "A19-tomato-milk-orange-cabinet",  # cabinet_transfer (the jar and the cartons upright; A18's packs lie as A25's)
    "A20-cookies-chocolate-microwave",  # arena_microwave
    "A22-pour-tomato-cookies-microwave",  # a22: pours, set aside, then the microwave
    "A25-butter-cream",  # plate_transfer
]


def tasks_with_plans(families: str) -> list[str]:
    """The non-pilot tasks with a plan whose id starts with one of ``families`` (letters);
    of the arena ("A"), only ARENA_SAMPLE."""
    ids = sorted(t for t in plans() if t[0] in families and t not in PILOTS)
    return [t for t in ids if not t.startswith("A") or t in ARENA_SAMPLE]


def assert_expert_solves_an_episode(suite: Suite, task_id: str, tmp_path) -> None:
    """Episode 0 of ``task_id`` by the expert, in a worker process, succeeds.

    A worker process because a built env keeps ~0.2 GB after it is closed, and ~50 tasks'
    envs in one test process reached 9.7 GB (killed for memory in CI); a worker's memory
    goes back to the system when it exits, after each task.
    """
    request = RunRequest(
        tasks=[suite.get(task_id)],
        num_trials_per_task=1,
        # the expert reports finished(): its episode ends once it is done and the scene still, with
        # the outcome it would have at the horizon (docs/protocol.md, End), not 1,200+ steps later
        protocol=Protocol(replan_steps=50, adapter_timeout=0, end_when_finished=True),
        out_root=tmp_path,
        policy={"name": "expert"},
        workers=1,
    )
    evaluate(request, build_adapter(builtin_spec("expert")))
    [record] = read_ledger(tmp_path / LEDGER_FILENAME)
    assert record.status == "ok" and record.success, (record.end_reason, record.error, record.checkpoints)
