"""One expert episode, through the harness, of each arena task in ARENA_SAMPLE."""

from __future__ import annotations

import pytest
from tests.sim.expert_episodes import assert_expert_solves_an_episode, tasks_with_plans

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("task_id", tasks_with_plans("A"))
def test_expert_solves_an_episode(suite, task_id, tmp_path):
    assert_expert_solves_an_episode(suite, task_id, tmp_path)
