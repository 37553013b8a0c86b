"""Report generation time over a synthetic 1,500-episode set of ledgers.

Builds 6 run folders (3 policies x replan 5 and 50) of 25 tasks x 10 episodes,
then times, in this process: plain ledger reading (``read_ledger`` of every
folder), the tables alone, and the whole ``memobench report`` (tables,
figures in PNG and PDF, index.html). Prints seconds and the ratio of each to
plain reading, the number to compare across machines; wall and CPU seconds (on a
shared machine the wall time includes waiting for a core).

    .venv/bin/python -m benchmarks.report_speed [--episodes 10] [--keep DIR]

Run it as a module from the repository root: the synthetic run folders come from the
test fixtures (``tests/report/synthetic_runs.py``), not from the installed package.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from tests.report.synthetic_runs import SUITE_SHAPE, synthetic_runs

from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.report.build import build_report, report_tables
from memobench.report.runs import load_runs

CONDITIONS = [(p, k, None) for p in ("expert", "expert-memoryless", "noop") for k in (5, 50)]


def timed(fn) -> tuple[float, float, object]:
    """(wall seconds, this process's CPU seconds, fn's value). On a shared machine wall time
    includes waiting for a core; CPU time is what an idle core would need."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - start, time.process_time() - cpu, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10, help="episodes per task and run (10 -> 1,500 total)")
    parser.add_argument("--keep", type=Path, help="keep the synthetic runs and the report here")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="memobench-report-speed-"))
    try:
        folders = synthetic_runs(root / "runs", CONDITIONS, args.episodes, np.random.default_rng(0))
        episodes = len(CONDITIONS) * len(SUITE_SHAPE) * args.episodes
        # warm-up: imports (matplotlib, pydantic models) are not what we measure
        build_report(folders[:1], root / "warmup", videos=False)

        read_s, read_cpu, _ = timed(lambda: [read_ledger(f / LEDGER_FILENAME) for f in folders])
        tables_s, tables_cpu, _ = timed(lambda: report_tables(load_runs(folders)))
        report_s, report_cpu, result = timed(lambda: build_report(folders, root / "report"))
        print(f"episodes: {episodes} in {len(folders)} runs x {len(SUITE_SHAPE)} tasks")
        print(f"read ledgers:   wall {read_s:7.3f} s  cpu {read_cpu:7.3f} s  (1.0x)")
        print(f"load + tables:  wall {tables_s:7.3f} s  cpu {tables_cpu:7.3f} s  ({tables_s / read_s:.1f}x reading)")
        print(
            f"whole report:   wall {report_s:7.3f} s  cpu {report_cpu:7.3f} s  ({report_s / read_s:.1f}x reading), "
            f"{len(result.files)} files"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
