"""Small synthetic run folders whose every number is computed by hand in the tests.

Run "expert k=5" (checkpoint ops: S storage, U update, C compression, u optional update):

task     type      ops  episodes: checkpoints completed (prefix)      success
T01-x    temporal  SU   ep0 2, ep1 1, ep2 0, ep3 2                    ep0, ep3
S01-x    spatial   SC   ep0 2, ep1 2                                  both
O01-x    object    SUu  ep0 2 (optional missed)                       yes

Run "noop k=5": T01-x ep0..3 and S01-x ep0..1, nothing completed.
Run "expert k=5 oracle=fine": T01-x ep0..2 done 2, ep3 done 1, ep4 done 2 (a seed the
standard run lacks); S01-x ep0..1 done 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.report.synthetic_runs import record, write_run


def expert_records():
    return [
        record("T01-x", 0, "SU", 2),
        record("T01-x", 1, "SU", 1),
        record("T01-x", 2, "SU", 0),
        record("T01-x", 3, "SU", 2),
        record("S01-x", 0, "SC", 2),
        record("S01-x", 1, "SC", 2),
        record("O01-x", 0, "SUu", 2),
    ]


def noop_records():
    return [record("T01-x", e, "SU", 0) for e in range(4)] + [record("S01-x", e, "SC", 0) for e in range(2)]


def oracle_records():
    return (
        [record("T01-x", e, "SU", 2) for e in range(3)]
        + [record("T01-x", 3, "SU", 1), record("T01-x", 4, "SU", 2)]
        + [record("S01-x", e, "SC", 2) for e in range(2)]
    )


@pytest.fixture
def run_folders(tmp_path: Path) -> dict[str, Path]:
    return {
        "expert": write_run(tmp_path / "runs" / "expert-r5", expert_records(), "expert", 5),
        "noop": write_run(tmp_path / "runs" / "noop-r5", noop_records(), "noop", 5),
        "oracle": write_run(tmp_path / "runs" / "expert-r5-fine", oracle_records(), "expert", 5, "fine"),
    }


@pytest.fixture
def records() -> dict[str, list]:
    return {"expert": expert_records(), "noop": noop_records(), "oracle": oracle_records()}


@pytest.fixture(scope="session")
def built_report(tmp_path_factory) -> Path:
    """The report of all three runs, with fake videos for T01-x in the expert run; built once."""
    from memobench.report.build import build_report

    root = tmp_path_factory.mktemp("built")
    folders = [
        write_run(root / "runs" / "expert-r5", expert_records(), "expert", 5),
        write_run(root / "runs" / "noop-r5", noop_records(), "noop", 5),
        write_run(root / "runs" / "expert-r5-fine", oracle_records(), "expert", 5, "fine"),
    ]
    videos = folders[0] / "videos" / "T01-x"
    videos.mkdir(parents=True)
    for name in (
        "T01-x_success_ep000_seed7.mp4",
        "T01-x_success_ep000_seed7_wrist.mp4",
        "T01-x_failure_ep001_seed8.mp4",
        "T01-x_failure_ep002_seed9.mp4",
    ):
        (videos / name).write_bytes(b"not really an mp4: " + name.encode())
    build_report(folders, root / "report")
    return root / "report"
