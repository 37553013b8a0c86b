"""The console progress of long runs: a bar on a terminal, a line per item in a log file."""

import io

from rich.console import Console
from tests.report.synthetic_runs import record

from memobench.cli.progress import RunProgress


def _drive(console: Console) -> str:
    with RunProgress(console) as progress:
        progress.jobs_started("render", 2)
        progress.job_finished("O01-cued-milk: 7401 frames")
        progress.job_finished("O02-cued-bowl: 7610 frames")
        progress.jobs_ended()
        progress.episodes_started(1)
        progress.episode_finished(record("T01-x", 3, "S", 1))
    return console.file.getvalue()


def test_a_log_file_gets_a_line_per_finished_item():
    out = _drive(Console(file=io.StringIO(), force_terminal=False, width=200))
    assert "render 1/2 O01-cued-milk: 7401 frames (0:00:00)" in out
    assert "render 2/2 O02-cued-bowl: 7610 frames (0:00:00)" in out
    assert "episodes 1/1 T01-x ep3 ok (0:00:00)" in out


def test_a_log_line_is_not_wrapped_at_the_console_width():
    out = _drive(Console(file=io.StringIO(), force_terminal=False, width=30))
    assert "render 1/2 O01-cued-milk: 7401 frames (0:00:00)\n" in out


def test_a_terminal_gets_the_bar_only():
    out = _drive(Console(file=io.StringIO(), force_terminal=True, width=200))
    assert "O02-cued-bowl: 7610 frames" in out  # the bar, drawn as it stops, shows the last item
    assert "render 1/2 O01" not in out and "(0:00:00)" not in out


def test_a_log_file_gets_at_most_a_line_per_interval_between_the_first_and_the_last():
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    with RunProgress(console) as progress:
        progress.jobs_started("training", 1000)
        for step in range(1000):  # steps done well within one interval
            progress.job_finished(f"loss {step}")
        progress.jobs_ended()
    lines = [line for line in console.file.getvalue().splitlines() if line.endswith(")")]  # not the bar
    assert lines == ["training 1/1000 loss 0 (0:00:00)", "training 1000/1000 loss 999 (0:00:00)"]
