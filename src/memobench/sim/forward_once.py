"""No separate ``mj_forward`` per physics substep, with bit-identical physics.

robosuite's control step runs ``control_timestep / model_timestep`` substeps (25 at 20 Hz), each
``sim.forward(); _pre_action(); sim.step()``, and ``sim.step()`` is ``mj_step``, which runs the
whole forward pass again before integrating. In ``_pre_action`` the arm controller's ``update``
calls ``sim.forward()`` a third time before reading the end-effector pose, Jacobians and mass
matrix. :class:`ForwardOnce` removes both repeats, inside a control step only:

- the controller's forward is skipped: nothing since the substep's own forward changed what
  ``mj_forward`` reads (positions, velocities, controls, warm start);
- the substep's forward runs as ``mj_step1`` (positions and velocities: kinematics, contacts, mass
  matrix, bias forces, everything the controller reads) and its ``sim.step()`` as ``mj_step2``
  (actuation from the controls the controller set, accelerations, constraints, integration):
  MuJoCo's split of ``mj_step`` for controllers, the same stages in the same order as
  ``mj_forward`` then ``mj_step``'s own forward, each once.

What differs: between the two halves, acceleration-stage values (``qacc``, constraint forces, the
wrist's force-torque sensor) are the previous substep's rather than recomputed for the current
state. robosuite reads only the force-torque sensor there, into a buffer LIBERO never uses (no
observation, reward or controller reads it); every observation is read after the step.

Outside a control step (resets, placements, restores set the state and then call ``forward``) every
call runs as robosuite makes it. A test drives the arm onto the table and drags it (contacts) both
ways and compares every physics state and observation bit for bit; ``benchmarks/sim_costs.py``
prints the step-time ratio.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class ForwardOnce:
    """Wraps ``sim.forward`` and ``sim.step`` of one robosuite ``MjSim`` (on the instance).

    Use :meth:`control_step` around the environment's ``step``; ``skipped`` counts the forwards
    skipped and ``split`` the substeps run as ``mj_step1`` + ``mj_step2`` (for tests).
    ``enabled = False`` runs every call as robosuite makes it (for tests and benchmarks).
    """

    def __init__(self, sim) -> None:
        import mujoco

        self.enabled = True
        self.skipped = 0
        self.split = 0
        self._forward, self._step = sim.forward, sim.step
        model, data = sim.model._model, sim.data._data
        self._step1 = lambda: mujoco.mj_step1(model, data)
        self._step2 = lambda: mujoco.mj_step2(model, data)
        self._in_step = False
        self._fresh = False  # mjData holds the forward of the current state (inside a control step only)
        self._half = False  # mj_step1 ran for the current state; the next step() is its mj_step2
        sim.forward, sim.step = self.forward, self.step

    def forward(self) -> None:
        if self._fresh and self.enabled:
            self.skipped += 1
            return
        if self._in_step and self.enabled:
            self._step1()
            self._half = True
        else:
            self._forward()
        self._fresh = self._in_step

    def step(self) -> None:
        if self._half:
            self.split += 1
            self._step2()
        else:
            self._step()
        self._fresh = self._half = False

    @contextmanager
    def control_step(self) -> Iterator[None]:
        """Inside: a forward right after a forward (no ``sim.step()`` between) is skipped, and a
        forward followed by a step runs as ``mj_step1`` + ``mj_step2``."""
        self._in_step, self._fresh, self._half = True, False, False
        try:
            yield
        finally:
            if self._half:  # a control step that ended between the halves: finish the forward
                self._forward()
            self._in_step, self._fresh, self._half = False, False, False
