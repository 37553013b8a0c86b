"""What a policy is given and when its episode ends, on real episodes (docs/protocol.md, sections 1-2).

- No episode index and no step reaches a policy: not an adapter's ``infer_actions`` or
  ``observe``, not a policy server's query message.
- The cue is handed over in a query whose chunk is discarded (the cue query): nothing the
  policy answers there moves the scene. RoboMemArena's protocol keeps the cue video in the
  first executed query.
- Under MEMOBench's protocol the commitments hold to the horizon: a success is decided there,
  and a redo after the post-goal window is a violation; RoboMemArena's protocol still ends a
  success once its post-goal window has passed.

Camera-free on O01 (a pointing cue) and T01, except the one test about the cue video.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from memobench.core.records import EpisodeStatus
from memobench.core.suite import Suite, Task
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.experts.policy import CrawlingReactivePolicy, ExpertPolicy, ReactiveExpertPolicy
from memobench.policies.adapter import AdapterGuard
from memobench.policies.remote import PolicyServer, RemotePolicy
from memobench.sim.env import SimEnv

pytestmark = pytest.mark.sim

CUE_TASK = "O01-cued-milk"
INDEX_KEYS = {"episode", "step"}


def hold(rows: int = 5) -> np.ndarray:
    actions = np.zeros((rows, 7))
    actions[:, 6] = -1.0
    return actions


def move_5cm(rows: int = 5) -> np.ndarray:
    """One chunk that, executed, carries the hand 5 cm along +x (1.0 commands 0.05 m per step)."""
    actions = hold(rows)
    actions[:, 0] = 1.0
    return actions


class Recorder:
    """Camera-free (unless ``images``) adapter keeping every obs it is handed; it answers the cue
    query (``cue`` True) with ``cue_answer`` and every other query with a still chunk."""

    def __init__(self, cue_answer: np.ndarray | None = None, *, images: bool = False, privileged: bool = False):
        self.cue_answer = hold() if cue_answer is None else cue_answer
        self.needs_images = images
        self.privileged = privileged
        self.queries: list[dict[str, Any]] = []
        self.observed: list[dict[str, Any]] = []
        self.physics: list[np.ndarray] = []  # per query, a privileged adapter's snapshot: qpos, qvel

    def reset(self) -> None:
        pass

    def observe(self, obs: dict[str, Any]) -> None:
        self.observed.append(dict(obs))

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        self.queries.append(dict(obs))
        if "privileged/snapshot" in obs:
            data = obs["privileged/snapshot"].data
            self.physics.append(np.concatenate([data.qpos, data.qvel]).copy())
        return self.cue_answer if obs.get("cue") else hold()


@pytest.fixture(scope="module")
def cue_task() -> Task:
    return Suite.load().get(CUE_TASK)


@pytest.fixture(scope="module")
def cue_env(cue_task: Task) -> Iterator[SimEnv]:
    env = SimEnv(cue_task.bddl(plan_episode(cue_task, 0, 7).binding))
    yield env
    env.close()


def run(task: Task, env: SimEnv, adapter: Any, **protocol: Any):
    protocol = Protocol(adapter_timeout=0, **{"horizon": 20, **protocol})
    return run_episode(task, plan_episode(task, 0, protocol.seed), env, AdapterGuard(adapter), protocol).record


# -- no index reaches a policy ---------------------------------------------------------------------


def test_no_episode_or_step_reaches_an_adapter(cue_task: Task, cue_env: SimEnv) -> None:
    adapter = Recorder()
    record = run(cue_task, cue_env, adapter)
    assert record.status == EpisodeStatus.OK and record.steps == 20
    cue_frames = [obs for obs in adapter.observed if obs.get("cue")]
    assert cue_frames and len(adapter.observed) == len(cue_frames) + 20  # the cue, then every executed step
    assert len(adapter.queries) == 1 + 4  # the cue query, then one every 5 steps
    for obs in adapter.queries + adapter.observed:
        assert not INDEX_KEYS & set(obs), sorted(obs)
    assert {tuple(sorted(obs)) for obs in adapter.queries[1:]} == {("observation/state", "prompt")}


def test_only_a_policy_that_asks_for_it_is_told_a_home_gate_is_next(cue_task: Task, cue_env: SimEnv) -> None:
    """``privileged/gate`` tells where the episode is in the task (a gate comes after a checkpoint
    is done): a privileged policy gets it only if it says ``wants_gate`` (adversary-arm)."""
    plain = Recorder(privileged=True)
    run(cue_task, cue_env, plain)
    asking = Recorder(privileged=True)
    asking.wants_gate = True
    run(cue_task, cue_env, asking)
    executed = [q for q in plain.queries if not q.get("cue")]
    assert executed and all("privileged/snapshot" in q and "privileged/gate" not in q for q in executed)
    assert all("privileged/gate" in q for q in asking.queries if not q.get("cue"))


def test_no_episode_or_step_reaches_a_policy_server(cue_task: Task, cue_env: SimEnv) -> None:
    served = Recorder()
    server = PolicyServer(served, port=0)
    client = RemotePolicy(port=server.start())
    try:
        record = run(cue_task, cue_env, client)
    finally:
        client.close(), server.stop()
    assert record.status == EpisodeStatus.OK and len(served.queries) == 1 + 4
    for message in served.queries:
        assert not INDEX_KEYS & set(message), sorted(message)
    assert [bool(message.get("cue")) for message in served.queries] == [True] + [False] * 4


# -- the cue query ---------------------------------------------------------------------------------


def test_the_cue_query_comes_first_and_its_chunk_never_runs(cue_task: Task, cue_env: SimEnv) -> None:
    moving, still = Recorder(move_5cm(), privileged=True), Recorder(hold(), privileged=True)
    a, b = run(cue_task, cue_env, moving), run(cue_task, cue_env, still)
    assert [bool(obs.get("cue")) for obs in moving.queries] == [True] + [False] * 4
    # Nothing ran between the cue query and the first executed query: the same scene, bit for bit ...
    np.testing.assert_array_equal(moving.physics[0], moving.physics[1])
    np.testing.assert_array_equal(moving.queries[0]["observation/state"], moving.queries[1]["observation/state"])
    # ... and the answer to the cue query changed nothing: a 5 cm move is the same as holding still.
    for x, y in zip(moving.physics, still.physics, strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.policy_queries == b.policy_queries == 4  # the executed queries; the cue query is not one
    assert a.model_dump(exclude={"timings"}) == b.model_dump(exclude={"timings"})


def test_a_broken_cue_query_chunk_is_the_policys_error(cue_task: Task, cue_env: SimEnv) -> None:
    broken = hold()
    broken[2, 1] = np.nan
    record = run(cue_task, cue_env, Recorder(broken))
    assert record.status == EpisodeStatus.ADAPTER_ERROR and (record.steps, record.policy_queries) == (0, 0)
    assert "non-finite value (nan) at row 2, column 1" in record.error


@pytest.mark.render
def test_the_cue_video_comes_once_in_the_cue_query_and_arenas_protocol_keeps_it_in_the_first(
    cue_task: Task,
) -> None:
    env = SimEnv(cue_task.bddl(plan_episode(cue_task, 0, 7).binding), render=True)
    try:
        memobench, arena = Recorder(images=True), Recorder(images=True)
        run(cue_task, env, memobench, horizon=10)
        run(cue_task, env, arena, horizon=10, name="robomemarena", seed=7)
    finally:
        env.close()
    with_video = [i for i, obs in enumerate(memobench.queries) if "prompt_video" in obs]
    assert with_video == [0] and memobench.queries[0]["cue"] is True and len(memobench.queries) == 3
    video = memobench.queries[0]["prompt_video"]
    cue_frames = [obs for obs in memobench.observed if obs.get("cue")]
    assert video.dtype == np.uint8 and video.shape == (len(cue_frames), 224, 224, 3) and len(video) > 1
    # RoboMemArena's protocol has no cue query: the video comes with the first executed query.
    assert not any(obs.get("cue") for obs in arena.queries) and len(arena.queries) == 2  # 5-row chunks
    assert [i for i, obs in enumerate(arena.queries) if "prompt_video" in obs] == [0]
    assert arena.queries[0]["prompt_video"].shape[1:] == (256, 256, 3)  # its 256-px frames


# -- commitments to the horizon ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def t01() -> Task:
    return Suite.load().get("T01-check-top-drawer")


@pytest.fixture(scope="module")
def t01_env(t01: Task) -> Iterator[SimEnv]:
    env = SimEnv(t01.bddl(plan_episode(t01, 0, 7).binding))
    yield env
    env.close()


class RedoAfterWindow:
    """The expert until its plan is done, still for ``wait`` steps, then the reactive expert (which
    opens the shut drawer again): a redo slower than the post-goal window. Privileged, as they are."""

    needs_images = False
    privileged = True

    def __init__(self, wait: int):
        self.wait = wait
        self.expert, self.redo = ExpertPolicy(), ReactiveExpertPolicy()
        self.done_at: int | None = None

    def reset(self) -> None:
        self.expert.reset(), self.redo.reset()
        self.done_at = None

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        step = obs["privileged/step"]
        if self.done_at is None:
            chunk = self.expert.infer_actions(obs, prompt, resize_size)
            if not self.expert.finished():
                return chunk
            self.done_at = step
        if step < self.done_at + self.wait:
            return hold(50)
        return self.redo.infer_actions(obs, prompt, resize_size)

    def close(self) -> None:
        self.expert.close(), self.redo.close()


def test_a_success_is_decided_at_the_horizon_and_arenas_protocol_ends_it_after_its_window(
    t01: Task, t01_env: SimEnv
) -> None:
    memobench = run(t01, t01_env, ExpertPolicy(), horizon=400)
    arena = run(t01, t01_env, ExpertPolicy(), horizon=400, name="robomemarena", seed=7)
    assert (memobench.success, memobench.end_reason, memobench.steps) == (True, "success", 400)
    assert memobench.stages_complete and memobench.failure_class is None
    # T01's goal is the check and then the arm home (its end gate): the window runs from there
    goal = arena.gates[-1]
    assert goal is not None and goal > arena.checkpoints[-1].step and goal + t01.spec.monitor_steps < 400
    assert (arena.success, arena.end_reason, arena.steps) == (True, "success", goal + t01.spec.monitor_steps + 1)


def test_adversary_slow_redoes_after_the_window_and_fails(t01: Task, t01_env: SimEnv) -> None:
    """The crawling reactive expert reopens T01's checked drawer long after the post-goal window:
    a success under a windowed rule, a violation under MEMOBench's protocol."""
    policy = CrawlingReactivePolicy()
    try:
        crawl = run(t01, t01_env, policy, horizon=1200)
    finally:
        policy.close()
    goal = crawl.checkpoints[-1].step
    assert goal is not None and crawl.violation is not None and crawl.violation.name == "top-reopened"
    assert crawl.violation.step > goal + 2 * t01.spec.monitor_steps


def test_a_redo_after_the_post_goal_window_is_a_violation_under_memobenchs_protocol(t01: Task, t01_env: SimEnv) -> None:
    wait = t01.spec.monitor_steps + 20
    strict = run(t01, t01_env, RedoAfterWindow(wait), horizon=600)
    lenient = run(t01, t01_env, RedoAfterWindow(wait), horizon=600, commitments_to_horizon=False)
    goal = strict.gates[-1]  # the check, then the arm home (T01's end gate)
    assert goal is not None and lenient.gates[-1] == goal
    assert not strict.success and strict.end_reason == "violation" and strict.failure_class == "over_execution"
    assert strict.violation.name == "top-reopened" and strict.violation.step > goal + t01.spec.monitor_steps
    # The rule before: the episode was a success once the window had passed, before the redo.
    assert (lenient.success, lenient.steps) == (True, goal + t01.spec.monitor_steps + 1)
