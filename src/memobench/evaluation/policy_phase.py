"""Which adapter call a worker process is in, readable by its parent after the worker died.

A worker that dies (a segfault in a model library, a policy calling
``os._exit``) leaves no message. If it died inside the policy, the episode is
the policy's failure (``adapter_error``, never retried); if it died in the
simulator, it is a fault to retry. The worker marks every adapter call here
(the :class:`~memobench.policies.adapter.AdapterGuard` wraps each call in
:meth:`PolicyPhase.call`), and the parent reads the mark once the worker is
lost.

The mark is two integers in shared memory the parent allocated: how many
adapter calls are in flight (a call abandoned at ``--adapter-timeout`` still
counts: its thread may still be running) and which call began last. The
parent reads them without a lock, so a worker dying while it writes cannot
block the parent; the worker serialises its own threads' writes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

#: The calls a worker makes into policy code; index 0 means none.
CALLS = (
    "",
    "building the adapter",
    "rebuilding the adapter",
    "reset()",
    "begin_episode()",
    "infer_actions()",
    "observe()",
    "close()",
    "finished()",
)

_IN_FLIGHT, _LAST = 0, 1


class PolicyPhase:
    """The shared mark of one worker. Create it in the parent and pass it to the worker process."""

    def __init__(self, context) -> None:
        self._shared = context.RawArray("i", 2)  # no lock: see the module docstring
        self._lock = threading.Lock()  # serialises this process's threads (not shared)

    def __getstate__(self):
        return {"_shared": self._shared}

    def __setstate__(self, state) -> None:
        self._shared, self._lock = state["_shared"], threading.Lock()

    @contextlib.contextmanager
    def call(self, what: str) -> Iterator[None]:
        """In the worker: mark policy code as running for the duration of the block."""
        with self._lock:
            self._shared[_IN_FLIGHT] += 1
            self._shared[_LAST] = CALLS.index(what)
        try:
            yield
        finally:
            with self._lock:
                self._shared[_IN_FLIGHT] -= 1

    def policy_call(self) -> str | None:
        """In the parent: the adapter call the worker was in (the last one begun), or None if none was running."""
        if self._shared[_IN_FLIGHT] <= 0:
            return None
        return CALLS[self._shared[_LAST]] or "a policy call"
