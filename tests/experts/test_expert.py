"""The plan runner and the chunking policy, with scripted plans and a fake forward model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from memobench.experts import policy as policy_module
from memobench.experts.control import DOWN
from memobench.experts.expert import CRAWL_FACTOR, SLOW_FACTOR, TALLY_TRIES, Expert, GoHome, Mode, Plan
from memobench.experts.scene_tally import TallyShove
from memobench.experts.skills import Skill
from memobench.experts.state_table import Shared


class Count(Skill):
    """Emits ``n`` actions whose first component is the skill's label."""

    def __init__(self, label: float, n: int):
        super().__init__()
        self.label, self.n, self.name = label, n, str(label)

    def step(self, scene):
        if self.steps >= self.n:
            return self.finish(True)
        return np.array([self.label, self.steps, 0, 0, 0, 0, -1.0])


class Counting(Plan):
    """Remembers how many skills finished; stops after three. Guesses 10 or 20 when it forgot."""

    def remember_cue(self, cue_states, scene, memory):
        memory["done"] = 0

    def remember(self, finished, scene, memory):
        memory["done"] = memory.get("done", 0) + 1

    def next_skill(self, scene, memory, rng):
        if "done" not in memory and self.choose([True, False], rng):
            return Count(10 + 10 * int(rng.integers(2)), 3)
        if memory.get("done", 0) >= 3:
            return None
        return Count(memory.get("done", 0), 2)


def stub_scene():
    """The runner passes the scene through (these plans never read it); the hand is home, so it
    never goes home first."""
    return SimpleNamespace(holding=lambda: False, all_shut=lambda: True, at_home=lambda: True)


class AwayScene:
    """A hand 0.2 m off its home pose (pointing down) that gets home after ``away`` actions."""

    def __init__(self, away: int, holding: bool = False, shut: bool = True):
        self.away, self.acts = away, 0
        self.holding = lambda: holding
        self.all_shut = lambda: shut

    def at_home(self) -> bool:
        return self.acts >= self.away

    def home_pose(self):
        return np.array([0.0, 0.0, 1.0]), DOWN.copy()

    def eef_pos(self):
        return np.array([0.0 if self.at_home() else 0.2, 0.0, 1.0])

    def eef_rot(self):
        return DOWN.copy()

    def arm_joints(self):
        return np.zeros(7)  # the wrist not flipped

    def finger_gap(self) -> float:
        return 0.08  # fully open


def test_the_expert_decides_from_home_with_nothing_held() -> None:
    scene = AwayScene(away=3)
    expert = Expert(Counting(), np.random.default_rng(1))
    expert.start(None, [])
    first = expert.act(scene)  # not home, nothing held, all shut: it heads home first
    assert isinstance(expert.skill, GoHome) and expert.decisions == 0
    assert first[0] < 0  # toward home (-x)
    for _ in range(40):  # home after 3 actions; the first decision follows
        scene.acts += 1
        expert.act(scene)
        if expert.decisions:
            break
    assert expert.decisions == 1 and not isinstance(expert.skill, GoHome)
    # holding something, or with a drawer open, it decides where it stands
    for scene in (AwayScene(away=99, holding=True), AwayScene(away=99, shut=False)):
        expert = Expert(Counting(), np.random.default_rng(1))
        expert.start(None, [])
        expert.act(scene)
        assert expert.decisions == 1


def run(expert, steps):
    scene = stub_scene()
    return np.array([expert.act(scene) for _ in range(steps)])


def test_expert_runs_skills_in_turn_and_holds_when_done():
    expert = Expert(Counting(), np.random.default_rng(1))
    expert.start(None, [])
    actions = run(expert, 8)
    assert list(actions[:6, 0]) == [0, 0, 1, 1, 2, 2]
    assert expert.done and expert.decisions == 4
    np.testing.assert_array_equal(actions[6], [0, 0, 0, 0, 0, 0, -1.0])


def test_memoryless_expert_clears_memory_before_every_decision():
    expert = Expert(Counting(), np.random.default_rng(1), mode="memoryless")
    actions = run(expert, 60)
    assert not expert.done  # it never remembers reaching three
    assert set(actions[:, 0]) <= {0.0, 10.0, 20.0}
    assert expert.memory == {} or expert.memory == {"done": 1}


def test_memoryless_guesses_come_from_the_episode_generator():
    a = run(Expert(Counting(), np.random.default_rng(5), mode="memoryless"), 40)
    b = run(Expert(Counting(), np.random.default_rng(5), mode="memoryless"), 40)
    c = run(Expert(Counting(), np.random.default_rng(6), mode="memoryless"), 40)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_reactive_expert_forgets_and_always_takes_the_first_choice():
    for seed in range(5):
        actions = run(Expert(Counting(), np.random.default_rng(seed), mode="reactive"), 30)
        # forgets (as the memoryless one) and always picks True: a Count(10 or 20) skill every
        # time, never the Count(0) a uniform guess of False would start
        assert set(actions[:, 0]) <= {10.0, 20.0}


def test_slow_expert_holds_still_after_each_skill_that_leaves_its_hand_empty():
    def started(mode: str) -> Expert:
        expert = Expert(Counting(), np.random.default_rng(1), mode=mode)
        expert.start(None, [])
        return expert

    normal = run(started("expert"), 6)
    slow = run(started("slow"), 6 * SLOW_FACTOR[Mode.SLOW])
    # its three 2-step skills at the expert's speed (the same path), each followed by as many
    # holds, which keep the skill's gripper command
    hold = np.array([0, 0, 0, 0, 0, 0, -1.0])
    assert list(normal[:, 0]) == [0, 0, 1, 1, 2, 2]
    np.testing.assert_array_equal(
        slow, np.array([*normal[0:2], hold, hold, *normal[2:4], hold, hold, *normal[4:6], hold, hold])
    )
    # with something in hand it does not pause (T09: a bottle just poured is carried off at once)
    holding = started("slow")
    scene = SimpleNamespace(holding=lambda: True, all_shut=lambda: True, at_home=lambda: True)
    np.testing.assert_array_equal(np.array([holding.act(scene) for _ in range(6)]), normal)


def test_arm_expert_keeps_its_memory_only_away_from_home_and_goes_home_only_for_a_gate():
    # away from home, no gate: it never heads home and remembers as the expert does
    expert = Expert(Counting(), np.random.default_rng(1), mode="arm")
    expert.start(None, [])
    away = AwayScene(away=10**6)
    actions = np.array([expert.act(away) for _ in range(8)])
    assert list(actions[:6, 0]) == [0, 0, 1, 1, 2, 2] and expert.done
    # deciding with the hand at home, its memory is wiped (the cue's too): it never counts to three
    expert = Expert(Counting(), np.random.default_rng(1), mode="arm")
    expert.start(None, [])
    home = run(expert, 60)
    assert not expert.done and set(home[:, 0]) <= {0.0, 10.0, 20.0} and {10.0, 20.0} & set(home[:, 0])
    # a gate pending: it goes home first, as every expert does
    expert = Expert(Counting(), np.random.default_rng(1), mode="arm")
    expert.start(None, [])
    expert.gate_pending = True
    expert.act(AwayScene(away=3))
    assert isinstance(expert.skill, GoHome) and expert.decisions == 0


def test_crawling_expert_is_the_reactive_one_holding_still_after_each_skill():
    reactive = run(Expert(Counting(), np.random.default_rng(3), mode="reactive"), 9)
    crawl = run(Expert(Counting(), np.random.default_rng(3), mode="crawl"), 9 * CRAWL_FACTOR)
    # each 3-step skill runs at full speed, then (CRAWL_FACTOR - 1) x 3 holds keep its gripper command
    expected = []
    for start in range(0, 9, 3):
        expected += [*reactive[start : start + 3], *[np.array([0, 0, 0, 0, 0, 0, -1.0])] * ((CRAWL_FACTOR - 1) * 3)]
    np.testing.assert_array_equal(crawl, np.array(expected))


class FakeModel:
    """Stands in for the simulator copy: the 'state' is the number of steps taken."""

    def __init__(self, task):
        self.scene, self.synced = stub_scene(), []

    def sync(self, snapshot):
        self.synced.append(snapshot)

    def step(self, action):
        pass

    def close(self):
        pass


class Task:
    id = "fake"


@pytest.fixture
def fake_policy(monkeypatch):
    monkeypatch.setattr(policy_module, "ForwardModel", FakeModel)

    def make():
        p = policy_module.ExpertPolicy(chunk=4, plan_factory=lambda task_id: Counting())
        p.reset()
        return p

    return make


def query(policy, step):
    return policy.infer_actions(
        {"privileged/task": Task(), "privileged/snapshot": step, "privileged/step": step}, "", 224
    )


@pytest.mark.parametrize("replan", [1, 2, 3, 4])
def test_policy_resumes_the_plan_where_the_harness_stopped_executing(fake_policy, replan):
    """Whatever the replan interval, the executed actions are the closed-loop sequence."""
    closed_loop = Expert(Counting(), np.random.default_rng(0))
    closed_loop.start(None, [])
    reference = run(closed_loop, 8)
    policy = fake_policy()
    policy.begin_episode(np.random.default_rng(0))
    executed, step = [], 0
    while step < 8:
        chunk = query(policy, step)
        assert chunk.shape == (4, 7)
        executed += list(chunk[:replan])
        step += replan
    np.testing.assert_array_equal(np.array(executed[:8]), reference)


class FakeTally:
    """A register written by the shove it hands out (a 4-action skill labelled 99), unless ``stuck``."""

    def __init__(self, stuck: bool = False):
        self.stuck, self.shoves = stuck, []

    def written(self, scene) -> bool:
        return bool(self.shoves) and not self.stuck and self.shoves[-1].finished

    def write(self, scene, attempt):
        shove = TallyShove([Count(99, 4)], name="shove")
        self.shoves.append(shove)
        return shove


def test_scene_expert_keeps_its_memory_only_while_its_tally_stands():
    # with something in memory at home it shoves first, then counts to three from the tally's memory;
    # the plan is not told the shove finished (it counts only its own skills)
    expert = Expert(Counting(), np.random.default_rng(1), mode="scene")
    expert.tally = Shared(FakeTally())
    expert.start(None, [])
    actions = run(expert, 12)
    assert list(actions[:10, 0]) == [99] * 4 + [0, 0, 1, 1, 2, 2] and expert.done
    # a shove that never moves its object: tried TALLY_TRIES times, then it forgets before every
    # decision, as the memoryless expert does
    expert = Expert(Counting(), np.random.default_rng(1), mode="scene")
    expert.tally = Shared(FakeTally(stuck=True))
    expert.start(None, [])
    actions = run(expert, 60)
    assert list(actions[: 4 * TALLY_TRIES, 0]) == [99] * 4 * TALLY_TRIES
    assert not expert.done and 99.0 not in set(actions[4 * TALLY_TRIES :, 0])
    # away from home (holding something, a drawer open) it keeps what it knows and does not shove
    expert = Expert(Counting(), np.random.default_rng(1), mode="scene")
    expert.tally = Shared(FakeTally())
    expert.start(None, [])
    away = AwayScene(away=10**6, holding=True)
    actions = np.array([expert.act(away) for _ in range(8)])
    assert list(actions[:6, 0]) == [0, 0, 1, 1, 2, 2] and expert.done
