"""The state observation shows what a camera shows: a fixture the expert opened and shut again
reads exactly as an untouched one (the Gymnasium ``state`` mode and the state-feature vector
alike), and the fixture bands mean what LIBERO's fixtures say. Camera-free.

Measured (seed 7, episode 0): the expert leaves T01's top drawer at q = +0.0016 m, T06's knob
at -0.0047 rad, T04's door at -1.2e-12 rad and S01's hiding drawer at about -0.002 m; raw, each
would tell an adversary that the fixture was used. Objects nobody touches are not bit-stable:
their poses move by up to ~4e-12 (float32 near-zero quaternion components) over an episode,
so only the fixture part is compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from memobench.core.suite import Suite
from memobench.data.state_features import MAX_OBJECTS, ROBOT_DIM, state_vector
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.experts.policy import ExpertPolicy
from memobench.gym.observation import SceneLayout, state_observation
from memobench.policies.adapter import AdapterGuard
from memobench.sim.env import SimEnv
from memobench.sim.fixture_bands import BANDS
from memobench.sim.world import WorldView

pytestmark = pytest.mark.sim

JOINTS = slice(ROBOT_DIM + MAX_OBJECTS * 8, None)  # the fixture joints of a state vector


class Snapshots:
    """The expert, keeping the scene's snapshot (the harness's privileged one) at each query."""

    privileged = True
    needs_images = False

    def __init__(self, policy: ExpertPolicy):
        self.policy, self.taken = policy, []
        self.observe, self.begin_episode, self.finished = policy.observe, policy.begin_episode, policy.finished

    def reset(self) -> None:
        self.policy.reset()

    def infer_actions(self, obs, prompt, resize_size):
        self.taken.append((int(obs["privileged/step"]), obs["privileged/snapshot"]))
        return self.policy.infer_actions(obs, prompt, resize_size)


@pytest.fixture(scope="module")
def expert():
    policy = ExpertPolicy()
    yield policy
    policy.close()


def run_expert(suite: Suite, expert: ExpertPolicy, task_id: str):
    """Episode 0 (seed 7) of ``task_id`` by the expert; (env in its final state, record, snapshots)."""
    task = suite.get(task_id)
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    recorder = Snapshots(expert)
    outcome = run_episode(task, plan, env, AdapterGuard(recorder, timeout=None), Protocol(adapter_timeout=0))
    assert outcome.record.success, (outcome.record.end_reason, outcome.record.violation)
    return env, outcome.record, recorder.taken


def observe(env: SimEnv) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """(raw fixture joints, their Gymnasium state reading, the state vector's, the Gymnasium observation)."""
    world, layout = WorldView(env), SceneLayout.of(env)
    obs = state_observation(env, world, layout)
    raw = np.array([env.sim.data.get_joint_qpos(j) for j in layout.fixture_joints])
    return raw, obs["fixture_joints"], state_vector(env, world, obs["robot_state"])[JOINTS][: len(raw)], obs


@pytest.mark.parametrize(
    ("task_id", "leaks"),
    [("T01-check-top-drawer", True), ("T04-microwave-open-close", False), ("T06-stove-on-off", True)],
)
def test_a_fixture_opened_and_shut_again_reads_exactly_as_at_the_start(suite, expert, task_id, leaks) -> None:
    """``leaks``: the raw joint at the end differs from the start by more than rounding (T04's
    door ends at -1.2e-12 rad, the others millimetres or milliradians away)."""
    env, record, snapshots = run_expert(suite, expert, task_id)
    try:
        assert all(cp.completed for cp in record.checkpoints)  # the fixture was opened and shut again
        raw_end, gym_end, vector_end = observe(env)[:3]
        env.restore(snapshots[0][1])  # the scene the policy's first query saw
        raw_start, gym_start, vector_start = observe(env)[:3]
        assert not np.array_equal(raw_end, raw_start)
        assert (np.abs(raw_end - raw_start).max() > 1e-4) == leaks
        assert gym_end.tobytes() == gym_start.tobytes() and vector_end.tobytes() == vector_start.tobytes()
        assert gym_end.tobytes() == vector_end.tobytes()
    finally:
        env.close()


def test_a_drawer_shut_over_the_butter_reads_as_the_untouched_drawers(suite, expert) -> None:
    """S01: the hiding drawer starts open; once the expert has shut it over the butter, the three
    drawers read 0.0 bit for bit, as the two untouched ones did at the start, and the butter is gone."""
    env, record, snapshots = run_expert(suite, expert, "S01-hide-and-retrieve-butter")
    try:
        hidden_at = record.checkpoints[1].step
        step, after_hiding = next((s, snap) for s, snap in snapshots if s > hidden_at)
        env.restore(after_hiding)
        raw, gym, vector, obs = observe(env)
        layout = SceneLayout.of(env)
        assert 1e-4 < abs(raw[layout.fixture_joints.index("wooden_cabinet_1_top_level")]) <= 0.005  # binding: top
        assert gym.tobytes() == vector.tobytes() == np.zeros(3, np.float32).tobytes()
        assert obs["object_visible"][layout.objects.index("butter_1")] == 0
        env.restore(snapshots[0][1])
        start = observe(env)[1]
        assert start[0] < -0.14 and start[1:].tobytes() == gym[1:].tobytes()  # open at the start, the others shut
    finally:
        env.close()


@pytest.fixture(scope="module")
def drawers(suite):
    env = SimEnv(suite.get("T03-check-all-drawers").bddl({}))
    env.reset(layout_seed=0)
    yield env
    env.close()


def set_joint(env: SimEnv, joint: str, q: float, speed: float = 0.0) -> None:
    env.sim.data.set_joint_qpos(joint, q)
    env.sim.data.set_joint_qvel(joint, speed)
    env.sim.forward()


@pytest.mark.parametrize(
    ("q", "speed", "ajar"),
    [(-0.07, 0.0, True), (-0.07, 0.001, True), (-0.07, 0.08, False), (-0.002, 0.0, False), (-0.15, 0.0, False)],
)
def test_ajar_on_the_simulator(drawers, q, speed, ajar) -> None:
    """Mid-travel at rest (the expert pulls at 0.06 m/s or more), not while moving, not shut, not open."""
    world = WorldView(drawers)
    set_joint(drawers, "wooden_cabinet_1_middle_level", q, speed)
    try:
        assert world.query("ajar", ("wooden_cabinet_1_middle_region",)) is ajar
        assert world.query("ajar", ("wooden_cabinet_1",)) is ajar  # the cabinet: any of its drawers
        assert world.query("ajar", ("wooden_cabinet_1_top_region",)) is False
        assert world.query("closed", ("wooden_cabinet_1_middle_region",)) is (q == -0.002)
    finally:
        set_joint(drawers, "wooden_cabinet_1_middle_level", 0.0)


def test_the_microwave_region_follows_its_door(suite) -> None:
    """The heating region lists no joint of its own: it is closed, and hides what is in it, exactly
    while the door is within its band (LIBERO's own test on the region reads closed always)."""
    task = suite.get("T04-microwave-open-close")
    env = SimEnv(task.bddl({}))
    try:
        env.reset(layout_seed=0)
        world, region = WorldView(env), "microwave_1_heating_region"
        for q, closed in [(0.0, True), (0.01, True), (-0.049, True), (-0.06, False), (-1.4, False)]:
            set_joint(env, "microwave_1_microjoint", q)
            assert world.query("closed", (region,)) is closed and world.query("closed", ("microwave_1",)) is closed
            assert world.query("opening", (region,)) == pytest.approx(max(0.0, -q), abs=1e-12)
            assert world.observed_joint("microwave_1_microjoint") == (0.0 if closed else q)
    finally:
        env.close()


def test_the_open_thresholds_are_libero_s_and_every_articulated_fixture_has_a_band(suite) -> None:
    import libero.libero.envs.objects  # noqa: F401  (registers LIBERO's object classes)
    from libero.libero.envs.base_object import OBJECTS_DICT
    from libero.libero.envs.objects.articulated_objects import ArticulatedObject, FlatStove, Microwave, WoodenCabinet

    from memobench.core.bddl_names import declared_instances

    def ranges(fixture: type, kind: str) -> list[float]:
        return fixture().object_properties["articulation"][f"default_{kind}_ranges"]

    assert BANDS["WoodenCabinet"].open == -max(ranges(WoodenCabinet, "open"))  # open at q < -0.14
    assert BANDS["Microwave"].open == -max(ranges(Microwave, "open"))  # open at q < -1.3
    assert BANDS["FlatStove"].open == min(ranges(FlatStove, "turnon"))  # on at q >= 0.5
    used = {category for task in suite for category in declared_instances(task.bddl_template).values()}
    used &= set(OBJECTS_DICT)  # the tables are the scene's workspace, not objects
    articulated = {OBJECTS_DICT[c].__name__ for c in used if issubclass(OBJECTS_DICT[c], ArticulatedObject)}
    assert articulated == set(BANDS)
