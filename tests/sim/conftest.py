"""Shared simulator fixtures: envs are built once per (task, variant) and module."""

from __future__ import annotations

import pytest

from memobench.core.suite import Suite


@pytest.fixture(scope="session")
def suite() -> Suite:
    return Suite.load()
