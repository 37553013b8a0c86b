"""When a drawer, door or knob is shut, open or ajar: one table per fixture class, used by everything.

A fixture part (a cabinet drawer, the microwave door, the stove knob) turns on one joint. Its
**opening** is how far that joint stands from shut in the direction it opens (metres a drawer is
pulled out, radians a door or knob is turned); a joint pressed past shut into its stop (a drawer
at q = +0.0017 m, the knob at -0.005 rad) has opening 0. Each class has one :class:`Band`:

- **shut** (``opening <= shut``): the part counts as closed (the stove: off); whatever lies in
  a region it encloses is out of sight; a ``state`` observation reads the joint as exactly its
  closed value, 0.0. Outside the band: not closed, the contents in view, the raw joint value,
  and where a task forbids opening the part, a violation at once. No gap is left between what
  a policy may see and what the rules allow (docs/protocol.md, "Fixture bands").
- **open**: LIBERO's own open / on test (``libero/envs/objects/articulated_objects.py``:
  ``WoodenCabinet`` open at q < -0.14, ``Microwave`` at q < -1.3, ``FlatStove`` on at q >= 0.5).
  MEMOBench's ``open()`` and ``turned_on()`` still ask LIBERO; the value here bounds ``ajar``.
- **ajar**: strictly between the two, with the joint at rest (``|speed| < rest_speed``): a part
  left in between, not one being moved through.

Measured with the scripted expert (camera-free, ``eval --seed 7`` episodes 0-2 of T01, T03, T04,
T05, T06, T07, T08, S01 and the arena's microwave tasks A20-A24; joint value and speed every step):

- Cabinet drawer (``WoodenCabinet``, joint range [-0.16, 0.01] m): pushed shut it rests at
  q = +0.0014 to +0.0017 (T01, T03; opening 0) or -0.002 (S01's hiding drawer); once back within
  5 mm it never moved out more than 2.7 mm again. 5 mm of the 160 mm travel is LIBERO's own
  closed range ([0, 0.005]) and MEMOBench's threshold before this table (``CLOSED_ABOVE``).
- Microwave door (``Microwave``, range [-2.094, 0] rad): the expert lets go of the handle and the
  door swings shut, coming to rest 0.004-0.027 rad open for about 35 steps until the expert
  presses it (T04, T05), rebounding up to 8e-4 rad as it stops; after the press it rests within
  0.0016 rad of shut (overshooting to the shut side, q up to +0.021, opening 0). A band edge
  inside the swing's resting range would let a rebound break the rule the instant after the
  check (T05 seed 8 came to rest at 0.01999 rad); 0.05 rad clears the widest rest about twice
  and moves the door's free edge (about 0.27 m from the hinge) about 13 mm. The arena's experts
  leave the door open (1.55-1.64 rad).
- Stove knob (``FlatStove``, range [-0.005, 2.1] rad): turned off it rests at -0.0046 to -0.0047
  rad (T06-T08, opening 0); once back within 0.05 rad it never turned out again (its turn goes
  on into the stop). At reset q = 0, which is off here (LIBERO calls only q < 0 off; nothing in
  the suites relied on that). 0.05 rad (3 degrees) is a tenth of the way to on.

Rest speeds: the slowest the expert moves a part anywhere between its shut band and open is
0.037 m/s for a drawer, 0.44 rad/s for the door and 0.30 rad/s for the knob; the door swinging
shut on its own is under 0.01 rad/s three steps after it stops, and parts at rest under 1e-6.
``rest_speed`` is at most a tenth of the expert's slowest move (0.005 m/s is 0.25 mm per control
step at 20 Hz), so a part the expert is moving is never ajar, and no expert episode above leaves
one ajar.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Band:
    """The shut, open and rest thresholds of one fixture class (see the module docstring)."""

    part: str  # what turns: "drawer", "door", "knob" (for messages)
    direction: int  # sign of the joint's motion as the part opens: -1 (q decreases) or +1
    shut: float  # opening <= shut: closed / off (m for a slide, rad for a hinge)
    open: float  # LIBERO's open / on test, as an opening
    rest_speed: float  # |joint speed| under this (m/s, rad/s): at rest
    encloses: bool  # no camera sees into the part's regions while it is shut

    def opening(self, q: float) -> float:
        """How far joint value ``q`` stands from shut, in the direction the part opens (>= 0)."""
        return max(0.0, self.direction * q)

    def shut_at(self, q: float) -> bool:
        """The part is closed (off) at joint value ``q``."""
        return self.opening(q) <= self.shut

    def observed(self, q: float) -> float:
        """What a ``state`` observation reports for joint value ``q``: 0.0 when shut, else ``q``."""
        return 0.0 if self.shut_at(q) else float(q)

    def ajar_at(self, q: float, speed: float) -> bool:
        """Strictly between shut and open, and at rest (``|speed| < rest_speed``)."""
        return self.shut < self.opening(q) < self.open and abs(speed) < self.rest_speed


BANDS: dict[str, Band] = {
    "WoodenCabinet": Band("drawer", -1, shut=0.005, open=0.14, rest_speed=0.005, encloses=True),
    "Microwave": Band("door", -1, shut=0.05, open=1.3, rest_speed=0.05, encloses=True),
    "FlatStove": Band("knob", +1, shut=0.05, open=0.5, rest_speed=0.03, encloses=False),
}
"""LIBERO fixture class name -> its band. Every articulated fixture a task uses must be here."""


def band_of(fixture_class: str) -> Band:
    """The band of LIBERO fixture class ``fixture_class``; KeyError naming the classes that have one."""
    try:
        return BANDS[fixture_class]
    except KeyError:
        known = ", ".join(sorted(BANDS))
        raise KeyError(
            f"no fixture band for {fixture_class!r} (classes with one: {known}); "
            "add it to memobench.sim.fixture_bands.BANDS"
        ) from None
