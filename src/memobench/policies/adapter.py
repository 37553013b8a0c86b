"""The adapter contract (RoboMemArena-compatible) and the guard that enforces it.

A policy is any object with:

- ``reset()`` - called before every episode; a stateful policy clears its memory;
- ``infer_actions(obs, prompt, resize_size) -> array [horizon, 7]`` - an action chunk;
- optional ``observe(obs)`` - called on every control step (cue frames included, with ``cue`` True);
- optional ``close()``.

Optional attributes the harness reads (all default to the conservative choice):

- ``needs_images`` (default True): False lets the harness run camera-free;
- ``observe_images`` (default False): True renders images for every ``observe`` call
  (about 0.1 s a frame on a CPU), otherwise ``observe`` gets the state only;
- ``observe_rollout`` (default True): False calls ``observe`` for the cue's frames only, for a
  policy that sees its own rollout through its queries (no per-step call, no per-step render);
- ``begin_episode(rng)``: built-in stochastic policies draw from the episode's generator. Only a
  policy that has it is given the generator (:func:`takes_episode_rng`; a policy server only if it
  lists the message), and ``run.json`` records whether it was: the generator's state is a function
  of the episode's seed, so of its index;
- ``privileged`` (default False): built-in experts only. Each query then also gets
  ``privileged/task`` (the Task), ``privileged/snapshot`` (the simulator's exact state) and
  ``privileged/step`` (the policy step), what a user policy is never given; one that also
  says ``wants_gate`` (``adversary-arm``) gets ``privileged/gate`` (a home gate is next);
- ``chunk_size`` (or ``chunk``, the built-in policies' name; default: undeclared): the rows
  every chunk has. A replan interval (``--replan-steps``) above it is refused before any
  episode (:func:`check_replan_steps`).

The harness runs the first ``replan_steps`` rows of each chunk and queries again. A chunk
with fewer rows runs whole and the policy is queried again at once: never padded, but the
interval was shorter there, so the episode record counts those queries
(``short_chunk_queries``, ``min_chunk_rows``) and ``run.json`` states the run's effective
interval.

Actions are normalised: every entry in [-1, 1] (:data:`ACTION_LOW`, :data:`ACTION_HIGH`;
robosuite would clip anything beyond silently). The :class:`AdapterGuard` turns every way a
policy can misbehave (raising, hanging past the timeout, returning a non-finite, mis-shaped,
empty or out-of-range chunk) into one :class:`AdapterError`, which the harness records as the
episode's ``adapter_error``; it never clips or repairs output silently. Clipping is the run's
choice (the protocol's ``clip_actions``, the default, recorded in ``run.json``; ``--strict-actions``
refuses instead): the harness then clips each action as it executes it and counts those it
clipped (:mod:`memobench.evaluation.action_range`).
"""

from __future__ import annotations

import contextlib
import numbers
import queue
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np

ACTION_DIM = 7
ACTION_LOW, ACTION_HIGH = -1.0, 1.0  # every action entry, the gripper's included


@runtime_checkable
class Adapter(Protocol):
    def reset(self) -> None: ...

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray: ...


class AdapterError(RuntimeError):
    """The policy failed; the message says how (exception, timeout, invalid output)."""


ERROR_TEXT_LIMIT = 4000  # characters of an adapter exception's text kept in the message (and the ledger)


def exception_text(e: BaseException) -> str:
    """``"Type: text"`` of an exception a policy raised, its text cut at :data:`ERROR_TEXT_LIMIT`
    characters (a 50 MB message would go into every ledger line) and never raising itself
    (a ``__str__`` that raises is reported as such)."""
    try:
        text = str(e)
    except Exception as inner:  # the policy's own __str__ failed
        text = f"(its text could not be made: {type(inner).__name__})"
    if len(text) > ERROR_TEXT_LIMIT:
        text = f"{text[:ERROR_TEXT_LIMIT]}... ({len(text) - ERROR_TEXT_LIMIT} more characters)"
    return f"{type(e).__name__}: {text}"


def takes_episode_rng(adapter: Any) -> bool:
    """Whether the harness hands ``adapter`` the episode's generator (``begin_episode(rng)``): it has
    the method and does not decline it (``wants_episode_rng`` False: a policy server that does not
    list the ``begin_episode`` message)."""
    hook = getattr(adapter, "begin_episode", None)
    return callable(hook) and bool(getattr(adapter, "wants_episode_rng", True))


def policy_receives(adapter: Any) -> dict[str, bool]:
    """What beyond the observation ``adapter`` is given, for ``run.json``: the episode's generator
    (``episode_rng``) and the privileged keys (``privileged``)."""
    return {"episode_rng": takes_episode_rng(adapter), "privileged": bool(getattr(adapter, "privileged", False))}


class ChunkLengthError(ValueError):
    """The replan interval asks for more actions per query than the adapter's declared chunk holds."""


CHUNK_LENGTH_ATTRIBUTES = ("chunk_size", "chunk")  # looked up in this order


def declared_chunk_length(adapter: Any) -> int | None:
    """The chunk length ``adapter`` declares (rows per chunk), or None when it declares none.

    The first of :data:`CHUNK_LENGTH_ATTRIBUTES` holding a positive integer wins;
    anything else there (None, a bool, a method, an array) counts as undeclared.
    """
    for name in CHUNK_LENGTH_ATTRIBUTES:
        value = getattr(adapter, name, None)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


def check_replan_steps(adapter: Any, replan_steps: int) -> None:
    """Refuse a replan interval longer than the adapter's declared chunk.

    Such an interval could never be kept: every query would run only the chunk's
    rows and query again. Raises :class:`ChunkLengthError` naming the flag, the
    value and the chunk length; an adapter that declares no length passes (its
    short chunks are counted per episode instead).
    """
    chunk = declared_chunk_length(adapter)
    if chunk is not None and replan_steps > chunk:
        raise ChunkLengthError(
            f"--replan-steps {replan_steps} is longer than the policy's action chunk ({chunk} rows): "
            f"each query could run at most {chunk} actions. Use --replan-steps {chunk} or less."
        )


def validate_chunk(raw: Any, action_dim: int = ACTION_DIM, clip: bool = False, range_check: bool = True) -> np.ndarray:
    """Check an action chunk and return it as float64 [horizon, action_dim].

    Raises :class:`AdapterError` if it is not numeric, not 2-D with
    ``action_dim`` columns, empty, contains NaN/inf, or (unless ``clip``) has an
    entry outside [:data:`ACTION_LOW`, :data:`ACTION_HIGH`]; with ``clip`` such
    entries are clipped into the range; with ``range_check`` False they are returned as they
    are (finite), for a caller that clips and counts them as it executes them.
    """
    try:
        chunk = np.asarray(raw)
        if chunk.dtype.kind not in "biuf":  # refuse strings/objects numpy would happily parse
            raise TypeError(f"dtype {chunk.dtype}")
        chunk = chunk.astype(np.float64)
    except (TypeError, ValueError) as e:
        raise AdapterError(f"infer_actions returned {type(raw).__name__}, not a numeric array: {e}") from None
    if chunk.ndim != 2 or chunk.shape[1] != action_dim:
        raise AdapterError(f"infer_actions returned shape {chunk.shape}; expected [horizon, {action_dim}]")
    if chunk.shape[0] == 0:
        raise AdapterError("infer_actions returned an empty chunk (horizon 0)")
    if not np.isfinite(chunk).all():
        bad = np.argwhere(~np.isfinite(chunk))[0]
        raise AdapterError(
            f"infer_actions returned a non-finite value ({chunk[tuple(bad)]}) at row {bad[0]}, column {bad[1]}"
        )
    if clip:
        return np.clip(chunk, ACTION_LOW, ACTION_HIGH)
    if not range_check:
        return chunk
    outside = (chunk < ACTION_LOW) | (chunk > ACTION_HIGH)
    if outside.any():
        bad = np.argwhere(outside)[0]
        raise AdapterError(
            f"infer_actions returned {chunk[tuple(bad)]:g} at row {bad[0]}, column {bad[1]}, outside the action "
            f"range [{ACTION_LOW:g}, {ACTION_HIGH:g}] ({int(outside.sum())} such value(s) in the chunk); "
            "runs without --strict-actions clip them instead"
        )
    return chunk


class _Worker:
    """A daemon thread that runs calls one at a time; abandoned if a call hangs."""

    def __init__(self) -> None:
        self.requests: queue.Queue = queue.Queue()
        threading.Thread(target=self._loop, daemon=True, name="memobench-adapter").start()

    def _loop(self) -> None:
        while True:
            fn, args, reply = self.requests.get()
            try:
                reply.put((True, fn(*args)))
            except BaseException as e:  # report everything, including SystemExit from user code
                reply.put((False, e))


class AdapterGuard:
    """Calls an adapter with a time limit and validated output.

    ``timeout`` is in seconds per call; ``None`` calls in the caller's thread
    with no limit. After a call times out, the hung thread is abandoned and a
    fresh one serves later calls.

    An abandoned call may still be running, and on the same adapter object: a
    later episode sharing that object would race it (a built-in expert's
    forward model, a policy's memory). So after a timeout the next ``reset()``
    swaps in a new adapter from ``rebuild`` (the run's factory) before the next
    episode starts. Without ``rebuild`` the old object stays in use.

    ``mark(what)`` (a context manager; a worker process passes its
    :class:`~memobench.evaluation.policy_phase.PolicyPhase` ``call``) is entered
    around every call into policy code, in the thread that runs it, so a
    process that dies inside the policy can be told from one that died in the
    simulator.
    """

    def __init__(
        self,
        adapter: Any,
        timeout: float | None = None,
        rebuild: Callable[[], Any] | None = None,
        mark: Callable[[str], AbstractContextManager] | None = None,
    ):
        self.timeout = timeout if timeout and timeout > 0 else None
        self._worker = _Worker() if self.timeout else None
        self._rebuild = rebuild
        self._mark = mark or (lambda what: contextlib.nullcontext())
        self.abandoned_calls = 0  # calls cut off by the timeout since the adapter was built
        self._use(adapter)

    def _use(self, adapter: Any) -> None:
        self.adapter = adapter
        self.needs_images = bool(getattr(adapter, "needs_images", True))
        self.observe_images = bool(getattr(adapter, "observe_images", False))
        self.has_observe = callable(getattr(adapter, "observe", None))
        self.observes_rollout = self.has_observe and bool(getattr(adapter, "observe_rollout", True))
        self.privileged = bool(getattr(adapter, "privileged", False))
        self.wants_gate = self.privileged and bool(getattr(adapter, "wants_gate", False))
        self.has_finished = callable(getattr(adapter, "finished", None))
        self.takes_episode_rng = takes_episode_rng(adapter)

    def _call(self, what: str, fn: Callable, *args: Any) -> Any:
        def marked(*args: Any) -> Any:
            with self._mark(what):
                return fn(*args)

        if self._worker is None:
            try:
                return marked(*args)
            except (Exception, SystemExit) as e:  # a policy's sys.exit() must not end the sweep
                raise AdapterError(f"{what} raised {exception_text(e)}") from e
        reply: queue.Queue = queue.Queue(maxsize=1)
        self._worker.requests.put((marked, args, reply))
        try:
            ok, value = reply.get(timeout=self.timeout)
        except queue.Empty:
            self._worker = _Worker()
            self.abandoned_calls += 1
            raise AdapterError(f"{what} did not return within --adapter-timeout {self.timeout:g} s") from None
        if not ok:
            raise AdapterError(f"{what} raised {exception_text(value)}") from value
        return value

    def reset(self) -> None:
        if self.abandoned_calls and self._rebuild is not None:
            try:
                with self._mark("rebuilding the adapter"):
                    adapter = self._rebuild()
                self._use(adapter)
            except Exception as e:
                raise AdapterError(f"rebuilding the adapter after a timed-out call raised {exception_text(e)}") from e
            self.abandoned_calls = 0
        self._call("reset()", self.adapter.reset)

    def begin_episode(self, rng: np.random.Generator) -> None:
        """Hand the adapter the episode's generator, if it takes it (:func:`takes_episode_rng`)."""
        if self.takes_episode_rng:
            self._call("begin_episode()", self.adapter.begin_episode, rng)

    def infer(
        self, obs: dict[str, Any], prompt: str, resize_size: int, clip: bool = False, range_check: bool = True
    ) -> np.ndarray:
        """The adapter's chunk, validated (:func:`validate_chunk`; ``clip``: out-of-range entries clipped;
        ``range_check`` False: kept as they are)."""
        raw = self._call("infer_actions()", self.adapter.infer_actions, obs, prompt, resize_size)
        return validate_chunk(raw, clip=clip, range_check=range_check)

    def finished(self) -> bool:
        """The adapter's optional ``finished()``: True promises that every action it
        returns from now on holds the robot still. False for adapters without it."""
        return self.has_finished and bool(self._call("finished()", self.adapter.finished))

    def observe(self, obs: dict[str, Any]) -> None:
        if self.has_observe:
            self._call("observe()", self.adapter.observe, obs)

    def close(self) -> None:
        close = getattr(self.adapter, "close", None)
        if callable(close):
            self._call("close()", close)
