"""Actions outside [-1, 1], as the field handles them: clipped into the range, and counted.

openpi's LIBERO client and robosuite's controllers clip an action entry beyond the range
(1.003 from a stock policy is rounding, not a fault), so by default the harness does too
(the protocol's ``clip_actions``); ``--strict-actions`` refuses such a chunk instead, as an
``adapter_error`` (:func:`memobench.policies.adapter.validate_chunk`). Non-finite values
are an ``adapter_error`` either way. Clipping is never silent: each episode's record counts
the executed actions that had an entry clipped and the largest excess, ``|a| - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memobench.policies.adapter import ACTION_HIGH, ACTION_LOW


@dataclass
class Clipping:
    """One episode's clipped actions: how many, and the largest excess of any entry (0.0: none)."""

    actions: int = 0
    max_excess: float = 0.0

    def clip(self, action: np.ndarray) -> np.ndarray:
        """``action`` with every entry clipped into the range, counted if any was outside it."""
        excess = float(np.max(np.maximum(action - ACTION_HIGH, ACTION_LOW - action)))
        if excess <= 0.0:
            return action
        self.actions += 1
        self.max_excess = max(self.max_excess, excess)
        return np.clip(action, ACTION_LOW, ACTION_HIGH)
