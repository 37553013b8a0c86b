"""The scene a demo file may be rendered in: the suite's own BDDL, never the file's.

A demo file stores the BDDL text of each demo's scene (``data/demo_<i>``
attribute ``bddl``). A file is untrusted input (downloaded, shared), and
LIBERO ``eval()``s parts of BDDL text, so ``memobench data render`` builds
scenes only from the suite's rendering of the demo's task and variant, and
refuses a file whose stored BDDL differs from it: the frames would show
another scene than the one recorded.
"""

from __future__ import annotations

import numbers
from collections import OrderedDict
from collections.abc import Container, Iterable, Iterator
from pathlib import Path
from typing import Any

from memobench.core.bindings import all_bindings
from memobench.core.suite import Suite, UnknownTaskError
from memobench.data.demo_file import Demo
from memobench.sim.env import MAX_ARM_START_JITTER

# Envs replay keeps, one a scene: every variant of 26 of the 30 tasks (O03 and O04 have 5, P04 6).
SCENE_ENVS = 3


class DemoFileError(ValueError):
    """A demo file that cannot be trusted or used; the message names the file and field."""


def _first_difference(a: str, b: str) -> int:
    """1-based line number of the first line where ``a`` and ``b`` differ."""
    for number, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"), strict=False), start=1):
        if x != y:
            return number
    return min(a.count("\n"), b.count("\n")) + 2


def arm_jitter_problem(attrs: dict[str, Any]) -> str | None:
    """What is wrong with a demo's ``arm_jitter`` attribute (absent: 0), or None."""
    jitter = attrs.get("arm_jitter", 0.0)
    if not isinstance(jitter, numbers.Real) or isinstance(jitter, bool) or not 0.0 <= jitter <= MAX_ARM_START_JITTER:
        return f"'arm_jitter' is {jitter!r}; expected radians in 0..{MAX_ARM_START_JITTER}"
    return None


def suite_scenes(path: Path, attrs: dict[str, Any], demos: list[Demo], suite: Suite | None = None) -> list[str]:
    """Per demo, the suite's BDDL of its task (the file name, ``<task_id>.hdf5``) and ``variant``.

    Raises :class:`DemoFileError` if the task is unknown, ``data`` attribute ``task_id``
    names another task, a demo's ``variant`` is not one of the task's, its stored
    ``bddl`` differs from the suite's, or its ``arm_jitter`` is not a deviation a protocol allows.
    """
    suite = suite or Suite.load()
    try:
        task = suite.get(path.stem)
    except UnknownTaskError as e:
        raise DemoFileError(f"{path}: the file name must be a task id: {e}") from None
    if attrs.get("task_id") != task.id:
        raise DemoFileError(
            f"{path}: data attribute 'task_id' is {attrs.get('task_id')!r}, the file name says {task.id!r}"
        )
    bindings = all_bindings(task.spec)
    scenes = []
    for i, demo in enumerate(demos):
        where = f"{path}: data/demo_{i} attribute"
        variant = demo.attrs.get("variant")
        if not isinstance(variant, int) or isinstance(variant, bool) or not 0 <= variant < len(bindings):
            raise DemoFileError(f"{where} 'variant' is {variant!r}; {task.id} has variants 0..{len(bindings) - 1}")
        expected = task.bddl(bindings[variant])
        stored = demo.attrs.get("bddl")
        if stored != expected:
            detail = (
                f"differs from line {_first_difference(stored, expected)} on"
                if isinstance(stored, str)
                else f"is {type(stored).__name__}, not text, unlike"
            )
            raise DemoFileError(
                f"{where} 'bddl' {detail} the suite's BDDL of {task.id} variant {variant}; "
                "refusing to build a scene from it (recorded with another task version, or "
                "altered)"
            )
        problem = arm_jitter_problem(demo.attrs)
        if problem:
            raise DemoFileError(f"{where} {problem}")
        scenes.append(expected)
    return scenes


def replay_envs(
    demos: Iterable[Demo], scenes: list[str], only: Container[int] | None = None, **env_kwargs: Any
) -> Iterator[tuple[int, Demo, Any]]:
    """``(i, demo, env)`` for each demo, ``env`` built from its scene and reset to its layout.

    ``scenes`` is :func:`suite_scenes`'s list for ``demos``; with ``only``, just the demos whose
    index ``i`` is in it (the others build and reset nothing). The envs of the last
    :data:`SCENE_ENVS` scenes are kept (building one costs seconds, and a task's demos cycle
    through its variants' scenes: two in three change scene) and closed when the iteration ends;
    ``env_kwargs`` go to :class:`~memobench.sim.env.SimEnv` (``render``, ``render_quality``).
    Close the iterator (``contextlib.closing``) to close the envs at once when the caller stops
    early.
    """
    from memobench.sim.env import SimEnv

    envs: OrderedDict[str, Any] = OrderedDict()  # scene -> env, the most recently used last
    try:
        for i, (demo, bddl) in enumerate(zip(demos, scenes, strict=True)):
            if only is not None and i not in only:
                continue
            env = envs.pop(bddl, None) or SimEnv(bddl, **env_kwargs)
            envs[bddl] = env
            if len(envs) > SCENE_ENVS:
                envs.popitem(last=False)[1].close()
            # fixture placement comes from the layout, the arm's start (and its controller's) from its jitter
            env.reset(demo.attrs["layout_seed"], float(demo.attrs.get("arm_jitter", 0.0)))
            yield i, demo, env
    finally:
        for env in envs.values():
            env.close()
