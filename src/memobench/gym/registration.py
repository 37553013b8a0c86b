"""Gymnasium ids for every task: ``MEMOBench/<task id>-v<version>``.

The version counts the task's spec changes (:mod:`memobench.gym.versions`), so an id means
one episode definition for good. Gymnasium 1.x reads no plugin entry points: ``import
memobench.gym`` (or the id prefix ``memobench.gym:``, which makes ``gymnasium.make`` import
it) registers the ids. The ``gymnasium.envs`` entry point in ``pyproject.toml`` names
:func:`register_envs` for the tools and older Gymnasium releases that do read it.
"""

from __future__ import annotations

NAMESPACE = "MEMOBench"
ENTRY_POINT = "memobench.gym.env:MemoBenchEnv"


def env_id(task_id: str, version: int) -> str:
    return f"{NAMESPACE}/{task_id}-v{version}"


def registered_ids() -> list[str]:
    """The id of every task's newest version (the one the installed spec is), in suite order.

    MEMOBench's tasks only: the arena's 26 (``Suite.load(arena=True)``) get no Gymnasium ids
    until their experts and certification exist, so an id never has to change meaning."""
    from memobench.core.suite import Suite
    from memobench.gym.versions import SPEC_VERSIONS

    return [env_id(t.id, len(SPEC_VERSIONS[t.id])) for t in Suite.load() if t.id in SPEC_VERSIONS]


def register_envs() -> None:
    """Register every task's newest version with Gymnasium (again: no-op). A task not yet in
    :data:`~memobench.gym.versions.SPEC_VERSIONS` gets no id (the registration test fails for it)."""
    import gymnasium

    from memobench.gym.versions import SPEC_VERSIONS

    for gym_id in registered_ids():
        if gym_id in gymnasium.registry:
            continue
        task_id = gym_id.removeprefix(f"{NAMESPACE}/").rsplit("-v", 1)[0]
        gymnasium.register(
            id=gym_id,
            entry_point=ENTRY_POINT,
            kwargs={"task_id": task_id, "spec_hash": SPEC_VERSIONS[task_id][-1]},
        )
