"""Worker processes that die with the command that started them.

A worker whose parent is killed (SIGKILL, OOM killer, a closed terminal) would
otherwise live on: a simulator and a policy model each, about 1.5 GB, forever
if its adapter hangs. :func:`die_with_parent` is called first thing in a
worker (the evaluation workers and the ``collect``/``data`` pool alike).

On Linux the kernel does it: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` sends the
worker SIGKILL when its parent goes, even while the worker is stuck in C code.
The signal follows the parent *thread* that started the worker, not the
process, so workers must be started from a thread that lives as long as they
are needed (the dispatcher and the pool start them from the command's main
thread). Where ``prctl`` is unavailable a daemon thread polls the parent's pid
instead; it cannot stop a worker blocked in C code that holds the GIL.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_SECONDS = 1.0  # the fallback watch's period


def die_with_parent(parent_pid: int, poll_seconds: float = POLL_SECONDS) -> str:
    """Make this process end when ``parent_pid`` (its parent now) does; returns how: ``"prctl"`` or ``"watch"``.

    Exits at once (status 1) if the parent is already gone: it may have died
    between starting this process and this call, before the signal was armed.
    """
    how = "prctl" if _set_parent_death_signal(signal.SIGKILL) else "watch"
    if os.getppid() != parent_pid:
        os._exit(1)
    if how == "watch":
        threading.Thread(
            target=_watch_parent, args=(parent_pid, poll_seconds), daemon=True, name="memobench-parent-watch"
        ).start()
    return how


def _set_parent_death_signal(sig: signal.Signals) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent thread ends; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def _watch_parent(parent_pid: int, poll_seconds: float) -> None:
    while os.getppid() == parent_pid:
        time.sleep(poll_seconds)
    os._exit(1)


# -- what an adapter started, where no worker process group holds it ----------------
def children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (Linux ``/proc``; elsewhere an empty set)."""
    found = set()
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != b"Z":
            found.add(int(entry.name))
    return found


def end_children_started_since(before: set[int]) -> list[int]:
    """SIGKILL every child of this process not in ``before`` and their descendants; returns the
    children ended (reaped, so none stays a zombie).

    For adapters run in the command's own process (``--workers 0``), which has no worker process
    group to end: a subprocess or fork the adapter started and left running is ended with the run.
    multiprocessing's resource tracker is kept (it is the interpreter's, started on first use).
    A grandchild whose parent already exited has been adopted by init and is out of reach.
    """
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    started = sorted(children(os.getpid()) - before - {tracker})
    queue, tree = list(started), []
    while queue:
        pid = queue.pop()
        tree.append(pid)
        queue += children(pid)
    for pid in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in started:
        with contextlib.suppress(ChildProcessError):  # reaped by its owner (a subprocess.Popen)
            os.waitpid(pid, 0)
    return started


@contextlib.contextmanager
def ending_children_started_within():
    """End, on leaving the block, the child processes this process started within it
    (:func:`end_children_started_since`): around adapter calls made in this process."""
    before = children(os.getpid())
    try:
        yield
    finally:
        end_children_started_since(before)
