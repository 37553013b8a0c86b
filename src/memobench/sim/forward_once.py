"""One ``mj_forward`` per physics substep instead of two, with bit-identical physics.

robosuite's control step runs ``control_timestep / model_timestep`` substeps (25 at 20 Hz), each
``sim.forward(); _pre_action(); sim.step()``. In ``_pre_action`` the arm controller's ``update``
calls ``sim.forward()`` again before reading the end-effector pose, Jacobians and mass matrix.
Nothing between the two calls changes what ``mj_forward`` reads (positions, velocities, controls,
warm start; ``mj_forward`` changes none of them), so the second recomputes exactly what the first
left in ``mjData``. :class:`ForwardOnce` skips such a repeat: a forward is skipped only when the
last call was a forward made inside the same control step with no ``sim.step()`` since.

Outside a control step (resets, placements, restores set the state and then call ``forward``) every
call runs. A test drives the arm onto the table and drags it (contacts) both ways and compares every
physics state bit for bit; ``benchmarks/sim_costs.py`` prints the step-time ratio (about 0.93).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class ForwardOnce:
    """Wraps ``sim.forward`` and ``sim.step`` of one robosuite ``MjSim`` (on the instance).

    Use :meth:`control_step` around the environment's ``step``; ``skipped`` counts the forwards
    skipped (for tests). ``enabled = False`` runs every call (for tests and benchmarks).
    """

    def __init__(self, sim) -> None:
        self.enabled = True
        self.skipped = 0
        self._forward, self._step = sim.forward, sim.step
        self._in_step = False
        self._fresh = False  # mjData holds the forward of the current state (inside a control step only)
        sim.forward, sim.step = self.forward, self.step

    def forward(self) -> None:
        if self._fresh and self.enabled:
            self.skipped += 1
            return
        self._forward()
        self._fresh = self._in_step

    def step(self) -> None:
        self._fresh = False
        self._step()

    @contextmanager
    def control_step(self) -> Iterator[None]:
        """Inside: a forward right after a forward (no ``sim.step()`` between) is skipped."""
        self._in_step, self._fresh = True, False
        try:
            yield
        finally:
            self._in_step, self._fresh = False, False
