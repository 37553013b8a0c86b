"""Bindings: the per-episode facts a task draws from its seed and never states.

A binding maps each binding name of a task to one value of its finite domain.
It fills ``{{name}}`` / ``{{name.key}}`` placeholders in the BDDL template and
``$name`` / ``$name.key`` references in checkpoint predicates.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.core.spec import PLACEHOLDER, TaskSpec


class BindingError(ValueError):
    """A template references a binding (or key) the task does not declare."""


def all_bindings(spec: TaskSpec) -> list[dict[str, Any]]:
    """Every binding of the task, in a fixed order (the variant index is the position)."""
    names = sorted(spec.bindings)
    combos = itertools.product(*(spec.bindings[n] for n in names))
    return [dict(zip(names, combo, strict=True)) for combo in combos]


def draw_binding(spec: TaskSpec, rng: np.random.Generator) -> tuple[int, dict[str, Any]]:
    """Draw (variant index, binding) uniformly over all bindings of the task."""
    variants = all_bindings(spec)
    index = int(rng.integers(len(variants)))
    return index, variants[index]


def lookup(binding: Mapping[str, Any], name: str, key: str | None) -> Any:
    """The value of ``name`` (or ``name.key``) in a binding; ``BindingError`` names what exists."""
    if name not in binding:
        known = ", ".join(sorted(binding)) or "none"
        raise BindingError(f"unknown binding {name!r} (declared: {known})")
    value = binding[name]
    if key is None:
        return value
    if not isinstance(value, Mapping) or key not in value:
        keys = ", ".join(sorted(value)) if isinstance(value, Mapping) else "none (not a mapping)"
        raise BindingError(f"binding {name!r} has no key {key!r} (keys: {keys})")
    return value[key]


def resolve_reference(text: str, binding: Mapping[str, Any]) -> Any:
    """``$name`` / ``$name.key`` -> its value under ``binding``; any other text is returned as is."""
    if not text.startswith("$"):
        return text
    name, _, key = text[1:].partition(".")
    return lookup(binding, name, key or None)


def render_template(text: str, binding: Mapping[str, Any]) -> str:
    """Fill ``{{name}}`` / ``{{name.key}}`` placeholders; values must be strings."""

    def fill(match: Any) -> str:
        value = lookup(binding, match.group(1), match.group(2))
        if not isinstance(value, str):
            raise BindingError(f"placeholder {match.group(0)} needs a string, got {value!r}")
        return value

    return PLACEHOLDER.sub(fill, text)


def binding_label(binding: Mapping[str, Any]) -> dict[str, Any]:
    """A short, JSON-friendly label of a binding: a mapping value is named by its ``name`` key."""
    return {k: (v.get("name", v) if isinstance(v, Mapping) else v) for k, v in sorted(binding.items())}
