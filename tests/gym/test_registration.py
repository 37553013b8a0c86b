"""Every task has a Gymnasium id whose version stands for its current spec (camera-free, no env is built)."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import gymnasium
import pytest

import memobench.gym
from memobench.core.suite import Suite
from memobench.gym.env import MemoBenchEnv, SpecMismatchError
from memobench.gym.registration import env_id
from memobench.gym.versions import SPEC_VERSIONS

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_every_task_is_registered_at_its_current_spec() -> None:
    """Fails when a task's spec changed without a new version: append its hash in memobench/gym/versions.py."""
    stale = {t.id: t.spec_hash for t in Suite.load() if SPEC_VERSIONS.get(t.id, ())[-1:] != (t.spec_hash,)}
    assert stale == {}, f"append these spec hashes to SPEC_VERSIONS (a new env version each): {stale}"
    assert set(SPEC_VERSIONS) == set(Suite.load().ids), "SPEC_VERSIONS names a task the suite does not have"
    ids = memobench.gym.registered_ids()
    assert len(ids) == len(Suite.load()) and all(i in gymnasium.registry for i in ids)
    versions = SPEC_VERSIONS["T03-check-all-drawers"]
    spec = gymnasium.spec(f"MEMOBench/T03-check-all-drawers-v{len(versions)}")
    assert spec.kwargs == {"task_id": "T03-check-all-drawers", "spec_hash": versions[-1]}


def test_the_entry_point_registers_the_ids() -> None:
    """pyproject's ``gymnasium.envs`` entry point names a function that registers every id."""
    entry = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]["gymnasium.envs"]
    module, _, attr = entry["MEMOBench"].partition(":")
    for gym_id in memobench.gym.registered_ids():
        del gymnasium.registry[gym_id]
    getattr(importlib.import_module(module), attr)()
    assert all(i in gymnasium.registry for i in memobench.gym.registered_ids())


def test_an_id_for_another_spec_is_refused_before_building() -> None:
    with pytest.raises(SpecMismatchError, match="installed task is spec"):
        MemoBenchEnv("T03-check-all-drawers", spec_hash="0" * 16)
    with pytest.raises(ValueError, match="obs_mode must be one of 'state', 'rgb', got 'depth'"):
        MemoBenchEnv("T03-check-all-drawers", obs_mode="depth")
    with pytest.raises(ValueError, match="reward must be one of"):
        MemoBenchEnv("T03", reward="shaped")
    assert env_id("T03-check-all-drawers", 2) == "MEMOBench/T03-check-all-drawers-v2"


def test_make_env_names_a_task_by_id_or_prefix_and_refuses_before_building() -> None:
    from memobench.gym.vector import make_env, resolve_id

    newest = f"MEMOBench/O01-cued-milk-v{len(SPEC_VERSIONS['O01-cued-milk'])}"
    assert resolve_id("O01") == resolve_id("O01-cued-milk") == resolve_id(newest) == newest
    with pytest.raises(ValueError, match="names 0 MEMOBench envs"):
        make_env("Z99", 2)
    with pytest.raises(ValueError, match="n_envs must be at least 1"):
        make_env("O01", 0)
