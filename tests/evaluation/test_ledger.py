"""Ledger: round trip, torn-line repair, invalid lines, duplicates, concurrent appenders."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from memobench.core.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.core.spec import MemoryOp, MemoryType
from memobench.evaluation.ledger import Ledger, LedgerError, LedgerWarning, read_ledger


def rec(task: str = "t", episode: int = 0, seed: int | None = None, pad: int = 0) -> EpisodeRecord:
    """A small valid record; ``pad`` bytes of binding make the line long."""
    return EpisodeRecord(
        task_id=task,
        memory_type=MemoryType.OBJECT,
        episode=episode,
        seed=7 + episode if seed is None else seed,
        binding={"pad": "x" * pad},
        status=EpisodeStatus.OK,
        success=False,
        failure_class=FailureClass.STALE_UPDATE,
        end_reason="horizon",
        checkpoints=[
            CheckpointResult(index=0, op=MemoryOp.STORAGE, completed=True, step=3),
            CheckpointResult(index=1, op=MemoryOp.UPDATE, completed=False),
        ],
        stage_score=0.5,
        stages_complete=False,
        average_score=0.5,
        steps=1200,
    )


def write_lines(path: Path, *records: EpisodeRecord) -> bytes:
    data = "".join(r.to_json_line() + "\n" for r in records).encode()
    path.write_bytes(data)
    return data


def test_append_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "ledger.jsonl"  # folder is created
    records = [rec("a", 0), rec("a", 1), rec("b", 0)]
    with Ledger(path) as ledger:
        for r in records:
            ledger.append(r)
        assert ledger.records() == records
        assert ledger.done_keys() == {("a", 0), ("a", 1), ("b", 0)}
        assert ledger.warnings == []
    lines = path.read_text().split("\n")
    assert lines[-1] == "" and len(lines) == 4  # every line ends with "\n"
    assert [json.loads(line)["task_id"] for line in lines[:-1]] == ["a", "a", "b"]
    assert read_ledger(path) == records
    with Ledger(path) as reopened:
        assert reopened.records() == records


def test_closed_ledger_refuses_appends(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.close()
    ledger.close()  # idempotent
    with pytest.raises(LedgerError, match="closed"):
        ledger.append(rec())


@pytest.mark.parametrize("how", ["replaced", "deleted"])
def test_a_file_rewritten_under_the_run_stops_it_before_a_record_is_lost(tmp_path: Path, how: str) -> None:
    """A git checkout over a committed run folder writes a new file at the path; appending to the
    old one (what the open descriptor still points at) would lose every later record."""
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.append(rec("a", 0))
        if how == "replaced":
            copy = tmp_path / "copy"
            copy.write_bytes(path.read_bytes())
            copy.replace(path)
        else:
            path.unlink()
        with pytest.raises(LedgerError, match=f"was {how}.* episode 1 was not written.*resume"):
            ledger.append(rec("a", 1))
    if how == "replaced":
        assert read_ledger(path) == [rec("a", 0)]
        with Ledger(path) as resumed:  # the resumed run appends to the file now at the path
            resumed.append(rec("a", 1))
        assert read_ledger(path) == [rec("a", 0), rec("a", 1)]


def test_torn_last_line_is_truncated_then_appending_works(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    whole = write_lines(path, rec("a", 0), rec("a", 1))
    torn = rec("a", 2).to_json_line().encode()[:57]  # SIGKILL mid-write
    path.write_bytes(whole + torn)

    with Ledger(path) as ledger:
        assert len(ledger.warnings) == 1 and "torn" in ledger.warnings[0]
        assert ":3:" in ledger.warnings[0]
        assert path.read_bytes() == whole  # partial line gone
        assert ledger.done_keys() == {("a", 0), ("a", 1)}
        ledger.append(rec("a", 2))
    assert [r.episode for r in read_ledger(path)] == [0, 1, 2]
    for line in path.read_text().splitlines():
        EpisodeRecord.from_json_line(line)  # every line whole and valid


def test_read_ledger_skips_torn_line_without_modifying(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    content = write_lines(path, rec("a", 0)) + b'{"task_id": "a", "epi'
    path.write_bytes(content)
    with pytest.warns(LedgerWarning, match="torn"):
        records = read_ledger(path)
    assert [r.episode for r in records] == [0]
    assert path.read_bytes() == content


@pytest.mark.parametrize("opener", [Ledger, read_ledger])
def test_invalid_complete_line_names_file_and_line(tmp_path: Path, opener) -> None:
    path = tmp_path / "ledger.jsonl"
    good = rec("a", 0).to_json_line()
    path.write_text(f'{good}\n{{"task_id": "a", oops\n{rec("a", 1).to_json_line()}\n')
    with pytest.raises(LedgerError, match=r"ledger\.jsonl:2: not a valid episode record"):
        opener(path)


def test_wrong_field_type_is_invalid_too(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    bad = json.loads(rec("a", 1).to_json_line())
    bad["episode"] = "one"
    path.write_text(f"{rec('a', 0).to_json_line()}\n{json.dumps(bad)}\n")
    with pytest.raises(LedgerError, match=r":2: .*episode"):
        Ledger(path)


def test_invalid_line_is_not_mistaken_for_torn(tmp_path: Path) -> None:
    # A complete (newline-terminated) last line that is garbage is an error, not repaired.
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(write_lines(path, rec("a", 0)) + b"garbage\n")
    with pytest.raises(LedgerError, match=":2:"):
        Ledger(path)
    assert path.read_bytes().endswith(b"garbage\n")


def test_duplicate_key_keeps_first_and_warns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    write_lines(path, rec("a", 0, seed=100), rec("a", 1), rec("a", 0, seed=200))
    with Ledger(path) as ledger:
        assert [(r.episode, r.seed) for r in ledger.records()] == [(0, 100), (1, 8)]
        assert len(ledger.warnings) == 1
        assert "duplicate" in ledger.warnings[0] and ":3:" in ledger.warnings[0]
        assert "keeping line 1" in ledger.warnings[0]
        # Appending a duplicate through the API resolves the same way.
        ledger.append(rec("a", 1, seed=300))
        assert [r.seed for r in ledger.records()] == [100, 8]
        assert len(ledger.warnings) == 2
    with pytest.warns(LedgerWarning, match="duplicate"):
        assert [r.seed for r in read_ledger(path)] == [100, 8]


def test_records_sees_other_writers_but_not_their_partial_lines(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as reader, Ledger(path) as writer:
        writer.append(rec("a", 0))
        assert reader.done_keys() == {("a", 0)}
        line = (rec("a", 1).to_json_line() + "\n").encode()
        with path.open("ab") as raw:  # a write still in flight: half a line, no newline yet
            raw.write(line[:30])
            raw.flush()
            assert reader.done_keys() == {("a", 0)}
            raw.write(line[30:])
        assert reader.done_keys() == {("a", 0), ("a", 1)}
        assert reader.warnings == []


def _append_many(path: str, worker: int, count: int, barrier) -> None:
    barrier.wait()
    with Ledger(path) as ledger:
        for episode in range(count):
            # 200 kB lines: far above PIPE_BUF and one page, so a non-atomic
            # (buffered, chunked) writer would interleave.
            ledger.append(rec(f"w{worker}", episode, pad=200_000 + worker))


def test_concurrent_appends_from_two_processes_give_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    Ledger(path).close()  # create (and repair) before the writers start
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    count = 25
    procs = [ctx.Process(target=_append_many, args=(str(path), w, count, barrier)) for w in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == 2 * count
    for line in lines:
        r = EpisodeRecord.from_json_line(line.decode())
        assert r.binding["pad"] == "x" * (200_000 + int(r.task_id[1]))
    keys = {(r.task_id, r.episode) for r in read_ledger(path)}
    assert keys == {(f"w{w}", e) for w in (0, 1) for e in range(count)}


def test_a_symlinked_ledger_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """A run folder is untrusted: a ledger that links elsewhere is neither appended to nor repaired
    (a target without a final newline would have lost its last line as a "torn" one)."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("someone's file\nno final newline")
    run = tmp_path / "run"
    run.mkdir()
    (run / "ledger.jsonl").symlink_to(target)
    with pytest.raises(LedgerError, match="is not a regular file"):
        Ledger(run / "ledger.jsonl")
    with pytest.raises(LedgerError, match="is not a regular file"):
        read_ledger(run / "ledger.jsonl")
    assert target.read_text() == "someone's file\nno final newline"


def test_a_fifo_ledger_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "ledger.jsonl")
    with pytest.raises(LedgerError, match="is not a regular file"):
        read_ledger(tmp_path / "ledger.jsonl")
    with pytest.raises(LedgerError, match="is not a regular file"):
        Ledger(tmp_path / "ledger.jsonl")
