"""Shared simulator fixtures: envs are built once per (task, variant) and module."""

from __future__ import annotations

import pytest

from memobench.core.suite import Suite


@pytest.fixture(scope="session")
def suite() -> Suite:
    # Both suites: the arena's tasks have expert plans too (test_expert_episodes_arena.py runs
    # some). Tests only look tasks up by id here.
    return Suite.load(arena=True)
