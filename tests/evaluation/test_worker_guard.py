"""Workers die with the command that started them, however it dies (no simulator).

Each test starts a command in a subprocess, finds its worker processes, SIGKILLs
the command and expects the workers gone within a few seconds: before the
guard they lived on, 1.5 GB each, forever when their adapter hung.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")

FAULTY = str(Path(__file__).with_name("faulty_adapters.py"))
MEMOBENCH = Path(sys.executable).with_name("memobench")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def spawned_children(parent: int) -> list[int]:
    """Pids of ``parent``'s multiprocessing children (spawned workers; not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if ppid == parent and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"not within {seconds} s: {what}")


def kill_and_expect_orphans_gone(command: subprocess.Popen, workers: list[int]) -> None:
    command.send_signal(signal.SIGKILL)
    command.wait(10)
    wait_for(lambda: not any(alive(w) for w in workers), 5, f"workers {workers} to die with their parent")


CHILD_SCRIPT = textwrap.dedent("""
    import multiprocessing, os, sys, time

    from memobench.evaluation import worker_guard

    def child(parent_pid, fallback):
        if fallback:  # as where prctl is unavailable
            worker_guard._set_parent_death_signal = lambda sig: False
        how = worker_guard.die_with_parent(parent_pid, poll_seconds=0.1)
        print(os.getpid(), how, flush=True)
        time.sleep(3600)

    if __name__ == "__main__":
        context = multiprocessing.get_context("spawn")
        context.Process(target=child, args=(os.getpid(), sys.argv[1] == "watch"), daemon=True).start()
        time.sleep(3600)
""")


@pytest.mark.parametrize("how", ["prctl", "watch"])
def test_a_guarded_child_dies_with_its_parent(tmp_path: Path, how: str) -> None:
    script = tmp_path / "parent.py"
    script.write_text(CHILD_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), how], stdout=subprocess.PIPE, text=True)
    try:
        pid, used = parent.stdout.readline().split()
        assert used == how and alive(int(pid))
        kill_and_expect_orphans_gone(parent, [int(pid)])
    finally:
        parent.kill()
        parent.wait()


def test_eval_workers_hung_in_their_adapter_die_with_a_killed_command(tmp_path: Path) -> None:
    if not MEMOBENCH.exists():
        pytest.skip(f"the memobench console script is not installed next to {sys.executable}")
    command = subprocess.Popen(
        [
            str(MEMOBENCH),
            "eval",
            "--adapter-spec",
            f"{FAULTY}:hangs_in_workers",
            "--tasks",
            "T03",
            "--num-trials-per-task",
            "2",
            "--workers",
            "2",
            "--adapter-timeout",
            "0",
            "--out-root",
            str(tmp_path / "o"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        workers = wait_for(lambda: len(w := spawned_children(command.pid)) == 2 and w, 60, "two workers")
        time.sleep(1.0)  # let them reach their adapter (their guard is set before it)
        kill_and_expect_orphans_gone(command, workers)
    finally:
        command.kill()
        command.wait()


def test_data_pool_workers_die_with_a_killed_command(tmp_path: Path) -> None:
    script = tmp_path / "pool.py"
    script.write_text(
        textwrap.dedent("""
        import time

        from memobench.data.jobs import ValidateJob, run_data_jobs
        from memobench.evaluation.execution import Execution


        class Sleeper:  # stands in for a long data job (the data commands' pool is the evaluation's)
            def __init__(self, phase=None):
                pass

            def run(self, job):
                time.sleep(3600)


        if __name__ == "__main__":
            import memobench.data.jobs as jobs

            jobs.DataJobRunner = Sleeper
            run_data_jobs("sleeping", [ValidateJob(f"f{i}", None, False) for i in range(2)], Execution(workers=2))
    """)
    )
    command = subprocess.Popen([sys.executable, str(script)])
    try:
        workers = wait_for(lambda: len(w := spawned_children(command.pid)) == 2 and w, 60, "two pool workers")
        time.sleep(1.0)
        kill_and_expect_orphans_gone(command, workers)
    finally:
        command.kill()
        command.wait()
