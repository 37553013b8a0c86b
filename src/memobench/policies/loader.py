"""Load an adapter from ``--adapter-spec`` or a built-in ``--policy`` name.

``--adapter-spec`` is ``path/to/file.py:factory`` or ``package.module:factory``;
the factory is called with ``--adapter-kwargs`` (a JSON object) and returns the
adapter. Every way this can go wrong raises :class:`AdapterSpecError` with a
message naming the spec, before any episode runs.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BUILTIN_POLICIES: dict[str, str] = {
    "noop": "memobench.policies.builtin:NoopPolicy",
    "random": "memobench.policies.builtin:RandomPolicy",
    "expert": "memobench.experts.policy:ExpertPolicy",
    "expert-memoryless": "memobench.experts.policy:MemorylessExpertPolicy",
    "expert-reactive": "memobench.experts.policy:ReactiveExpertPolicy",
    "expert-slow": "memobench.experts.policy:SlowExpertPolicy",
    "adversary-slow": "memobench.experts.policy:CrawlingReactivePolicy",
    "adversary-arm": "memobench.experts.policy:ArmRegisterPolicy",
    "adversary-state": "memobench.experts.policy:StateTablePolicy",
    "adversary-scene": "memobench.experts.policy:SceneTallyPolicy",
    # memoryless exploits of RoboMemArena's scoring (the arena suite): docs/arena.md
    "arena-exploit": "memobench.experts.arena_exploits:ArenaExploitPolicy",
    "arena-exploit-register": "memobench.experts.arena_exploits:ArenaRegisterExploitPolicy",
    "remote": "memobench.policies.remote:RemotePolicy",  # a websocket policy server (memobench serve, openpi)
    "checkpoint": "memobench.training.checkpoint_policy:CheckpointPolicy",  # memobench train's output (torch)
}


class AdapterSpecError(ValueError):
    """The adapter could not be loaded or built; the message says which part failed."""


def _load_module_from_file(path: Path):
    if not path.is_file():
        raise AdapterSpecError(f"adapter file not found: {path}")
    # A unique module name per file, so two adapters named adapter.py don't collide.
    name = f"memobench_adapter_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AdapterSpecError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Adapters often import their sibling files: let them, as `python file.py` would.
    sys.path.insert(0, str(path.resolve().parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # e.g. a script that parses sys.argv at import
        raise AdapterSpecError(f"importing {path} failed: {type(e).__name__}: {e}") from e
    return module


def _load_module(target: str):
    if target.endswith(".py") or "/" in target or "\\" in target:
        return _load_module_from_file(Path(target))
    try:
        return importlib.import_module(target)
    except ImportError as e:
        raise AdapterSpecError(f"cannot import module {target!r}: {e}") from e
    except (Exception, SystemExit) as e:  # the module itself failed while importing
        raise AdapterSpecError(f"importing module {target!r} failed: {type(e).__name__}: {e}") from e


def resolve_factory(spec: str):
    """The factory callable named by ``spec`` (``file.py:name`` or ``module:name``)."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise AdapterSpecError(
            f"adapter spec {spec!r} must look like path/to/file.py:factory or package.module:factory"
        )
    module = _load_module(target)
    factory = getattr(module, attr, None)
    if factory is None:
        public = [n for n in dir(module) if not n.startswith("_")]
        close = difflib.get_close_matches(attr, public, n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise AdapterSpecError(f"{target} has no factory named {attr!r}{hint}")
    if not callable(factory):
        raise AdapterSpecError(f"{target}:{attr} is a {type(factory).__name__}, not a callable factory")
    return factory


def build_adapter(spec: str, kwargs: dict[str, Any] | None = None) -> Any:
    """Call the factory with ``kwargs`` and check the result honours the adapter contract."""
    factory = resolve_factory(spec)
    try:
        adapter = factory(**(kwargs or {}))
    except (Exception, SystemExit) as e:
        raise AdapterSpecError(f"factory {spec} raised {type(e).__name__}: {e}") from e
    missing = [m for m in ("reset", "infer_actions") if not callable(getattr(adapter, m, None))]
    if missing:
        raise AdapterSpecError(
            f"factory {spec} returned a {type(adapter).__name__} without {' and '.join(missing)}(); "
            "an adapter needs reset() and infer_actions(obs, prompt, resize_size)"
        )
    return adapter


def builtin_spec(name: str) -> str:
    """The ``module:factory`` spec of a built-in policy; unknown names suggest the closest."""
    if name in BUILTIN_POLICIES:
        return BUILTIN_POLICIES[name]
    close = difflib.get_close_matches(name, list(BUILTIN_POLICIES), n=2, cutoff=0.4)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise AdapterSpecError(f"unknown policy {name!r}{hint} (built-in: {', '.join(BUILTIN_POLICIES)})")


def policy_factory(block: dict[str, Any]) -> Callable[[], Any]:
    """A no-argument builder for the adapter a run's policy block names.

    ``block`` is ``{"name": built-in}`` or ``{"adapter_spec": ..., "adapter_kwargs": {...}}``;
    workers build their adapter with it, and the guard rebuilds one after a timed-out call.
    """
    spec = block["adapter_spec"] if "adapter_spec" in block else builtin_spec(block["name"])
    kwargs = block.get("adapter_kwargs") or {}
    return lambda: build_adapter(spec, kwargs)
