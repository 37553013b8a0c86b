"""Adapters that break their worker once (the marker file says it happened), then behave as ``noop``.

Loaded by ``--adapter-spec tests/evaluation/faulty_adapters.py:<factory>`` inside
worker processes. The ``*_in_sim_once`` ones break the *simulator* (a patched
``SimEnv.step``, in worker processes only), so the first execution of some
episode loses its worker and the re-execution runs normally; ``dies_once`` and
``hangs_once`` break inside ``infer_actions``, which is the policy's failure.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from memobench.policies.builtin import NoopPolicy


class _BreaksOnce(NoopPolicy):
    def __init__(self, marker: str, how: str):
        super().__init__()
        self.marker, self.how = Path(marker), how

    def infer_actions(self, obs, prompt, resize_size):
        try:
            self.marker.touch(exist_ok=False)  # only the first call anywhere breaks
        except FileExistsError:
            return super().infer_actions(obs, prompt, resize_size)
        if self.how == "die":
            os.kill(os.getpid(), signal.SIGKILL)  # as a segfault or the OOM killer would
        if self.how == "exit":
            os._exit(3)  # as a policy ending its own process would
        time.sleep(3600)  # hangs: only the episode timeout can end this
        return super().infer_actions(obs, prompt, resize_size)


def _break_simulator_once(marker: str, how: str) -> None:
    """In a worker process, make the first ``SimEnv.step`` anywhere die or hang."""
    import multiprocessing

    from memobench.sim.env import SimEnv

    if multiprocessing.parent_process() is None:  # the command's own copy, built for its checks
        return
    step = SimEnv.step

    def broken_step(env, action):
        try:
            Path(marker).touch(exist_ok=False)
        except FileExistsError:
            return step(env, action)
        if how == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(3600)

    SimEnv.step = broken_step


def dies_in_sim_once(marker: str) -> NoopPolicy:
    _break_simulator_once(marker, "die")
    return NoopPolicy()


def hangs_in_sim_once(marker: str) -> NoopPolicy:
    _break_simulator_once(marker, "hang")
    return NoopPolicy()


def exits_once(marker: str) -> NoopPolicy:
    return _BreaksOnce(marker, "exit")


def dies_once(marker: str) -> NoopPolicy:
    return _BreaksOnce(marker, "die")


def hangs_once(marker: str) -> NoopPolicy:
    return _BreaksOnce(marker, "hang")


def hangs_in_workers() -> NoopPolicy:
    """Builds at once in the command (its checks), hangs forever when a worker process builds it."""
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        time.sleep(3600)
    return NoopPolicy()


class _StartsAChild(NoopPolicy):
    """Starts a long-lived child process on its first call (writing its pid to ``marker``)."""

    def __init__(self, marker: str, how: str):
        super().__init__()
        self.marker, self.how, self.started = Path(marker), how, False

    def infer_actions(self, obs, prompt, resize_size):
        if not self.started:
            self.started = True
            if self.how == "subprocess":
                import subprocess
                import sys

                pid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid
            else:
                pid = os.fork()
                if pid == 0:  # the child: as a forked data loader or server would, it just stays
                    time.sleep(600)
                    os._exit(0)
            self.marker.write_text(str(pid))
        return super().infer_actions(obs, prompt, resize_size)


def starts_a_subprocess(marker: str) -> NoopPolicy:
    return _StartsAChild(marker, "subprocess")


def forks_a_child(marker: str) -> NoopPolicy:
    return _StartsAChild(marker, "fork")
