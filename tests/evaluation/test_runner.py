"""Sweeps end to end on a real LIBERO scene: adapter errors, spec errors, determinism, resume.

Camera-free (built-in style adapters with ``needs_images = False``) on
``T03-check-all-drawers`` (no cue, no binding) with short horizons. In-process
runs share one built env through a module-scoped cache; the kill/resume tests
and the README example run the real ``memobench`` command in a subprocess.
"""

from __future__ import annotations

import ctypes.util
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from memobench.cli import app
from memobench.core.records import EpisodeRecord, EpisodeStatus, FailureClass
from memobench.core.suite import Suite, Task
from memobench.evaluation import runner
from memobench.evaluation.envs import EnvCache
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_events import RunEvents
from memobench.evaluation.run_folder import RunFolderError, replan_accounting
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import RunResult, evaluate
from memobench.metrics.export import write_summary
from memobench.policies.adapter import ChunkLengthError
from memobench.policies.loader import build_adapter, builtin_spec

pytestmark = pytest.mark.sim

TASK_ID = "T03-check-all-drawers"
REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SPEC = "examples/robomemarena_adapter.py:build_adapter"
MEMOBENCH = Path(sys.executable).with_name("memobench")
OUTPUTS = ["episodes.csv", "ledger.jsonl", "run.json", "summary.json", "task_summary.csv"]


# -- fixtures and helpers ---------------------------------------------------------------------


class _SharedEnvs(EnvCache):
    """An env cache that outlives one ``evaluate`` call (which closes its cache at the end)."""

    def close(self) -> None:
        pass

    def close_all(self) -> None:
        super().close()


@pytest.fixture(scope="module")
def task() -> Task:
    return Suite.load().select(TASK_ID)[0]


@pytest.fixture(scope="module")
def shared_envs() -> Iterator[_SharedEnvs]:
    envs = _SharedEnvs()
    yield envs
    envs.close_all()


Run = Callable[..., RunResult]


@pytest.fixture
def run(task: Task, shared_envs: _SharedEnvs, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``run(out, adapter, episodes=.., resume=.., policy=.., events=.., **protocol)``, in-process,
    then the summary files as the CLI writes them."""
    monkeypatch.setattr(runner, "EnvCache", lambda: shared_envs)

    def _run(
        out: Path,
        adapter: Any,
        *,
        episodes: int = 2,
        resume: bool = False,
        policy: dict[str, Any] | None = None,
        events: RunEvents | None = None,
        **protocol: Any,
    ) -> RunResult:
        protocol.setdefault("horizon", 20)
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=episodes,
            protocol=Protocol(**protocol),
            out_root=out,
            policy=policy or {"name": "test"},
            resume=resume,
        )
        result = evaluate(request, adapter, events)
        write_summary(result.records, out)
        return result

    return _run


def ok_chunk(rows: int = 50) -> np.ndarray:
    actions = np.zeros((rows, 7))
    actions[:, 6] = -1.0
    return actions


def ledger_lines(out: Path) -> list[bytes]:
    """The ledger's complete lines (each with its newline); a torn tail is left out."""
    data = (out / LEDGER_FILENAME).read_bytes()
    return data.splitlines(keepends=True)


def without_timings(record: EpisodeRecord | bytes | str) -> dict[str, Any]:
    if not isinstance(record, EpisodeRecord):
        record = EpisodeRecord.from_json_line(record.decode() if isinstance(record, bytes) else record)
    data = record.model_dump(mode="json")
    data.pop("timings")
    return data


def cli(*args: str) -> Any:
    # A wide terminal so rich does not wrap the error message across lines.
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"})


def memobench_cmd(*args: str) -> list[str]:
    if not MEMOBENCH.exists():
        pytest.skip(f"the memobench console script is not installed next to {sys.executable}")
    return [str(MEMOBENCH), *args]


def subprocess_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", **extra}


def run_memobench(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run the installed ``memobench`` command and assert it exits 0."""
    done = subprocess.run(memobench_cmd(*args), cwd=cwd, capture_output=True, env=subprocess_env(**env), timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done


# -- adapter errors inside a sweep ----------------------------------------------------------------


class FailsOnce:
    """Camera-free adapter that misbehaves once, in episode 0 at query ``at_query``, else holds still.

    A policy is told neither the episode nor the step: in-process, episode e is the (e+1)-th
    reset, and the steps are the rollout's ``observe`` calls."""

    needs_images = False

    def __init__(self, misbehave: Callable[[], Any], at_query: int = 0, where: str = "infer"):
        self.misbehave, self.at_query, self.where = misbehave, at_query, where
        self.queries: dict[int, int] = {}
        self.resets = 0
        self.observed = 0
        self.release = threading.Event()
        if where == "observe":
            self.observe = self._observe

    def reset(self) -> None:
        self.resets += 1
        self.observed = 0
        if self.where == "reset" and self.resets == 1:
            self.misbehave()

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> Any:
        episode = self.resets - 1
        query = self.queries.get(episode, 0)
        self.queries[episode] = query + 1
        if self.where == "infer" and episode == 0 and query == self.at_query:
            return self.misbehave()
        return ok_chunk()

    def _observe(self, obs: dict[str, Any]) -> None:
        step, self.observed = self.observed, self.observed + 1  # observed after executing that step
        if self.resets == 1 and step == 7:
            self.misbehave()


def _raise() -> None:
    raise ValueError("policy server returned 500")


def _with(value: float) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        actions = ok_chunk()
        actions[2, 1] = value
        return actions

    return make


@dataclass(frozen=True)
class Case:
    misbehave: Callable[[], Any]
    message: str  # the record's error
    where: str = "infer"  # "infer", "reset" or "observe"
    at_query: int = 0  # which query of episode 0 misbehaves (where="infer")
    steps: int = 0  # control steps done before the error
    queries: int = 0  # successful queries before the error
    strict: bool = False  # run with --strict-actions (clip_actions False)


RAISED = "raised ValueError: policy server returned 500"
NON_FINITE = "infer_actions returned a non-finite value ({}) at row 2, column 1"
ERROR_CASES = {
    "raises": Case(_raise, f"infer_actions() {RAISED}"),
    "raises-later": Case(_raise, f"infer_actions() {RAISED}", at_query=2, steps=10, queries=2),
    "nan": Case(_with(np.nan), NON_FINITE.format("nan"), at_query=1, steps=5, queries=1),
    "inf": Case(_with(np.inf), NON_FINITE.format("inf")),
    "-inf": Case(_with(-np.inf), NON_FINITE.format("-inf")),
    "wrong-width": Case(lambda: np.zeros((50, 6)), "infer_actions returned shape (50, 6); expected [horizon, 7]"),
    "one-action": Case(lambda: np.zeros(7), "infer_actions returned shape (7,); expected [horizon, 7]"),
    "empty": Case(lambda: np.zeros((0, 7)), "infer_actions returned an empty chunk (horizon 0)"),
    "out-of-range": Case(
        _with(1e6),
        "infer_actions returned 1e+06 at row 2, column 1, outside the action range "
        "[-1, 1] (1 such value(s) in the chunk); runs without --strict-actions clip them instead",
        at_query=1,
        steps=5,
        queries=1,
        strict=True,
    ),
    "not-numeric": Case(
        lambda: "move up",
        "infer_actions returned str, not a numeric array: dtype <U7",
    ),
    "reset-raises": Case(_raise, f"reset() {RAISED}", where="reset"),
    "observe-raises": Case(_raise, f"observe() {RAISED}", where="observe", steps=8, queries=2),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_adapter_error_is_recorded_and_the_sweep_goes_on(case: str, run: Run, tmp_path: Path) -> None:
    expected = ERROR_CASES[case]
    adapter = FailsOnce(expected.misbehave, expected.at_query, expected.where)
    result = run(tmp_path / "out", adapter, episodes=3, clip_actions=not expected.strict)

    records = read_ledger(tmp_path / "out" / LEDGER_FILENAME)
    assert [r.episode for r in records] == [0, 1, 2]
    assert result.ran == records
    bad, *good = records
    assert bad.status == EpisodeStatus.ADAPTER_ERROR
    assert bad.failure_class == FailureClass.ADAPTER_ERROR
    assert bad.end_reason == "adapter_error"
    assert bad.error == expected.message
    assert bad.success is False
    assert (bad.steps, bad.policy_queries) == (expected.steps, expected.queries)
    for record in good:
        assert record.status == EpisodeStatus.OK
        assert record.error is None
        assert record.end_reason == "horizon"
        assert (record.steps, record.policy_queries) == (20, 4)
    assert adapter.resets == 3
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())["tasks"][TASK_ID]
    assert summary["episodes"] == 3
    assert summary["adapter_errors"] == 1
    assert summary["failures"]["adapter_error"] == 1


def test_out_of_range_actions_are_clipped_by_default_and_counted_in_the_ledger(run: Run, tmp_path: Path) -> None:
    """Row 2 of episode 0's second chunk has 1e6 (executed: replan 5) and row 7 of its fourth 1.25
    (never executed: not counted); episode 1 stays in range."""

    adapter = FailsOnce(ok_chunk)
    chunks = {1: (2, 1, 1e6), 3: (7, 0, -1.25)}  # query of episode 0: (row, column, value)

    def infer_actions(obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        actions = ok_chunk()
        query = adapter.queries.get(adapter.resets - 1, 0)
        adapter.queries[adapter.resets - 1] = query + 1
        if adapter.resets == 1 and query in chunks:
            row, column, value = chunks[query]
            actions[row, column] = value
        return actions

    adapter.infer_actions = infer_actions
    run(tmp_path / "out", adapter, episodes=2)
    first, second = read_ledger(tmp_path / "out" / LEDGER_FILENAME)
    assert first.status == EpisodeStatus.OK and (first.steps, first.policy_queries) == (20, 4)
    assert (first.clipped_actions, first.max_action_excess) == (1, 1e6 - 1)
    assert (second.clipped_actions, second.max_action_excess) == (0, 0.0)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["protocol"]["clip_actions"] is True


def test_run_json_says_whether_the_policy_got_the_episode_generator(run: Run, tmp_path: Path) -> None:
    for name, adapter, receives in (
        ("plain", ObsLog(50), {"episode_rng": False, "privileged": False}),  # no begin_episode
        ("random", random_policy(), {"episode_rng": True, "privileged": False}),
        ("expert", build_adapter(builtin_spec("expert")), {"episode_rng": True, "privileged": True}),
    ):
        run(tmp_path / name, adapter, episodes=1, horizon=5)
        assert json.loads((tmp_path / name / "run.json").read_text())["policy_receives"] == receives, name


def test_hung_adapter_times_out_and_the_sweep_goes_on(run: Run, tmp_path: Path) -> None:
    # The second query of episode 0 blocks until the test releases it (in the finally below).
    hung_call_returned = threading.Event()

    def hang():
        adapter.release.wait(30)
        hung_call_returned.set()
        return ok_chunk()

    adapter = FailsOnce(hang, at_query=1)
    try:
        run(tmp_path / "out", adapter, episodes=2, adapter_timeout=1.0, policy=NOOP_POLICY)
        # the sweep went on without waiting for the hung call (one timeout, not one per call)
        assert not hung_call_returned.is_set()
    finally:
        adapter.release.set()
    # the hung call may still be running on `adapter`: episode 1 ran on a fresh one from the policy block
    assert 1 not in adapter.queries
    records = read_ledger(tmp_path / "out" / LEDGER_FILENAME)
    assert [(r.episode, r.status) for r in records] == [
        (0, EpisodeStatus.ADAPTER_ERROR),
        (1, EpisodeStatus.OK),
    ]
    assert records[0].failure_class == FailureClass.ADAPTER_ERROR
    assert records[0].error == "infer_actions() did not return within --adapter-timeout 1 s"
    assert (records[0].steps, records[0].policy_queries) == (5, 1)
    assert (records[1].steps, records[1].policy_queries, records[1].error) == (20, 4, None)


class ObsLog:
    """Camera-free adapter returning ``rows``-row chunks and keeping every obs it gets, and the
    step of each query (counted from its ``observe`` calls: after every executed step)."""

    needs_images = False

    def __init__(self, rows: int):
        self.rows = rows
        self.seen: list[tuple[dict[str, Any], str, int]] = []
        self.query_steps: list[int] = []
        self.observed = 0

    def reset(self) -> None:
        self.observed = 0

    def observe(self, obs: dict[str, Any]) -> None:
        self.observed += 1

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        self.seen.append((obs, prompt, resize_size))
        self.query_steps.append(self.observed)
        return ok_chunk(self.rows)


@pytest.mark.parametrize(
    "rows, replan_steps, query_steps",
    [(50, 5, [0, 5, 10, 15]), (50, 20, [0]), (3, 5, [0, 3, 6, 9, 12, 15, 18]), (50, 8, [0, 8, 16])],
)
def test_policy_is_queried_every_replan_steps(
    run: Run, tmp_path: Path, rows: int, replan_steps: int, query_steps: list[int]
) -> None:
    adapter = ObsLog(rows)
    [record] = run(tmp_path / "out", adapter, episodes=1, replan_steps=replan_steps, resize_size=96).ran
    assert adapter.query_steps == query_steps
    assert (record.steps, record.policy_queries) == (20, len(query_steps))
    # A chunk shorter than the interval ran whole and the policy was asked again: every such
    # query is counted, and run.json states the interval actually kept.
    short = len(query_steps) if rows < replan_steps else 0
    assert (record.short_chunk_queries, record.min_chunk_rows) == (short, rows)
    run_json = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run_json["protocol"]["replan_steps"] == replan_steps
    assert run_json["effective_replan_steps"] == min(replan_steps, rows)
    assert run_json["short_chunks"] == {"queries": short, "episodes": int(short > 0), "smallest_chunk_rows": rows}
    obs, prompt, resize_size = adapter.seen[0]
    assert set(obs) == {"observation/state", "prompt"}  # camera-free: no images; no episode, no step
    assert obs["observation/state"].dtype == np.float32 and obs["observation/state"].shape == (8,)
    assert obs["prompt"] == prompt == "check all three drawers of the cabinet from top to bottom and close each one"
    assert resize_size == 96


def test_effective_interval_covers_the_whole_ledger_and_does_not_block_resume(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(out, ObsLog(3), episodes=1, replan_steps=5)  # queries at 0, 3, ..., 18: 7 short chunks
    assert json.loads((out / "run.json").read_text())["effective_replan_steps"] == 3
    result = run(out, ObsLog(50), episodes=2, replan_steps=5, resume=True)  # full chunks now
    assert [r.episode for r in result.ran] == [1] and result.ran[0].short_chunk_queries == 0
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["effective_replan_steps"] == 3  # episode 0 is still in the ledger
    assert run_json["short_chunks"] == {"queries": 7, "episodes": 1, "smallest_chunk_rows": 3}
    assert len(run_json["resumed"]) == 1


def test_replan_accounting_of_ledger_records() -> None:
    def rec(episode: int, short: int, smallest: int | None) -> EpisodeRecord:
        return EpisodeRecord(
            task_id=TASK_ID,
            memory_type="temporal",
            episode=episode,
            seed=7 + episode,
            status=EpisodeStatus.OK,
            success=False,
            failure_class=FailureClass.STORAGE_FAILURE,
            end_reason="horizon",
            checkpoints=[],
            stage_score=0.0,
            stages_complete=False,
            average_score=0.0,
            steps=20,
            short_chunk_queries=short,
            min_chunk_rows=smallest,
        )

    # smallest chunk seen 4 < 8: the run kept an interval of 4 wherever that chunk came
    records = [rec(0, 0, 50), rec(1, 3, 4), rec(2, 1, 6)]
    assert replan_accounting(records, 8) == {
        "effective_replan_steps": 4,
        "short_chunks": {"queries": 3 + 1, "episodes": 2, "smallest_chunk_rows": 4},
    }
    # chunks never shorter than the interval: it was kept
    assert replan_accounting(records[:1], 8)["effective_replan_steps"] == 8
    # no query seen (or a ledger from before these fields): the interval as set, nothing known
    old = EpisodeRecord.from_json_line(
        rec(0, 0, None).model_dump_json(exclude={"short_chunk_queries", "min_chunk_rows"})
    )
    assert (old.short_chunk_queries, old.min_chunk_rows) == (0, None)
    assert replan_accounting([old], 8) == {
        "effective_replan_steps": 8,
        "short_chunks": {"queries": 0, "episodes": 0, "smallest_chunk_rows": None},
    }


# -- a --replan-steps above the adapter's declared chunk is refused before any episode -------------


def test_replan_steps_above_the_declared_chunk_is_refused_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    monkeypatch.setattr(EnvCache, "get", lambda *a: built.append(a))  # no env may be built
    out = tmp_path / "out"
    result = cli(*NOOP_ARGS, "--replan-steps", "51", "--out-root", str(out))
    assert result.exit_code == 2
    assert " ".join(result.stderr.split()) == (
        "error: --replan-steps 51 is longer than the policy's action chunk (50 rows): each query "
        "could run at most 50 actions. Use --replan-steps 50 or less."
    )
    assert not out.exists() and built == []

    class Declared(ObsLog):
        chunk_size = 3

    request = RunRequest(
        tasks=Suite.load().select(TASK_ID),
        num_trials_per_task=1,
        protocol=Protocol(replan_steps=5, horizon=20),
        out_root=out,
        policy={"name": "test"},
    )
    with pytest.raises(ChunkLengthError, match="--replan-steps 5 is longer than the policy's action chunk"):
        evaluate(request, Declared(3))
    assert not out.exists() and built == []


# -- a bad --adapter-spec fails before any episode ---------------------------------------------------


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "policy.py").write_text(
        "def build_adapter(**kwargs):\n    raise RuntimeError('checkpoint not found: /models/pi0')\n"
    )
    return tmp_path


@pytest.mark.parametrize(
    "spec, message",
    [
        ("adapters/missing.py:build_adapter", "adapter file not found: adapters/missing.py"),
        (
            "adapters/policy.py:build_adaptor",
            "adapters/policy.py has no factory named 'build_adaptor'; did you mean build_adapter?",
        ),
        (
            "adapters/policy.py:build_adapter",
            "factory adapters/policy.py:build_adapter raised RuntimeError: checkpoint not found: /models/pi0",
        ),
    ],
)
def test_bad_adapter_spec_fails_before_any_episode(
    spec: str, message: str, spec_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(spec_dir)
    monkeypatch.setattr(sys, "path", list(sys.path))
    built: list[Any] = []
    monkeypatch.setattr(EnvCache, "get", lambda *a: built.append(a))  # no env may be built
    out = spec_dir / "out"
    argv = f"eval --tasks {TASK_ID} --num-trials-per-task 1 --horizon 20".split()
    result = cli(*argv, "--adapter-spec", spec, "--out-root", str(out))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: {message}"
    assert not out.exists()
    assert built == []


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            "{offset: 1}",
            "--adapter-kwargs is not valid JSON (Expecting property name enclosed in double quotes at column 2): "
            "{offset: 1}",
        ),
        ("[1, 2]", "--adapter-kwargs must be a JSON object like '{\"key\": 1}', got list"),
    ],
)
def test_bad_adapter_kwargs_fail_before_any_episode(kwargs: str, message: str, tmp_path: Path) -> None:
    argv = f"eval --adapter-spec {EXAMPLE_SPEC} --tasks {TASK_ID}".split()
    result = cli(*argv, "--adapter-kwargs", kwargs, "--out-root", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {message}"
    assert not (tmp_path / "o").exists()


def test_policy_and_adapter_spec_together_are_refused(tmp_path: Path) -> None:
    argv = f"eval --policy noop --adapter-spec {EXAMPLE_SPEC}".split()
    result = cli(*argv, "--out-root", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "give either --policy or --adapter-spec, not both" in result.stderr
    assert not (tmp_path / "o").exists()


def test_unknown_builtin_policy_is_refused(tmp_path: Path) -> None:
    result = cli("eval", "--policy", "rando", "--tasks", TASK_ID, "--out-root", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "unknown policy 'rando'; did you mean 'random'" in result.stderr
    assert not (tmp_path / "o").exists()


# -- determinism ------------------------------------------------------------------------------


class Recording:
    """Wraps a policy and records, per episode, a digest of every state it was shown."""

    needs_images = False

    def __init__(self, inner: Any):
        self.inner = inner
        self.trace: dict[int, list[str]] = {}  # per episode: in-process, the reset count - 1
        self.resets = 0

    def begin_episode(self, rng: np.random.Generator) -> None:
        self.inner.begin_episode(rng)

    def reset(self) -> None:
        self.resets += 1
        self.inner.reset()

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        digest = hashlib.sha1(obs["observation/state"].tobytes()).hexdigest()[:12]
        self.trace.setdefault(self.resets - 1, []).append(digest)
        return self.inner.infer_actions(obs, prompt, resize_size)


def random_policy() -> Recording:
    return Recording(build_adapter(builtin_spec("random")))


def test_same_seed_gives_identical_records(run: Run, tmp_path: Path) -> None:
    a, b, c = random_policy(), random_policy(), random_policy()
    run(tmp_path / "a", a, episodes=3)
    run(tmp_path / "b", b, episodes=3)
    run(tmp_path / "c", c, episodes=2, seed=8)

    lines_a, lines_b = ledger_lines(tmp_path / "a"), ledger_lines(tmp_path / "b")
    assert len(lines_a) == 3
    assert [without_timings(x) for x in lines_a] == [without_timings(x) for x in lines_b]
    # The random policy saw the same states: same layout, same actions, same physics.
    assert a.trace == b.trace
    assert [len(t) for t in a.trace.values()] == [4, 4, 4]
    assert len({t[-1] for t in a.trace.values()}) == 3  # the episodes differ from each other
    # Episode e of seed base 8 is episode e + 1 of seed base 7 (seed = base + e) ...
    assert c.trace == {0: a.trace[1], 1: a.trace[2]}
    records_c = read_ledger(tmp_path / "c" / LEDGER_FILENAME)
    assert [r.seed for r in records_c] == [8, 9]


def test_builtin_random_policy_records_match_across_folders(run: Run, tmp_path: Path) -> None:
    for name in ("a", "b"):
        run(
            tmp_path / name,
            build_adapter(builtin_spec("random")),
            episodes=2,
            horizon=30,
            policy={"name": "random", "adapter_kwargs": {}},
        )
    a, b = ledger_lines(tmp_path / "a"), ledger_lines(tmp_path / "b")
    assert [json.loads(x)["seed"] for x in a] == [7, 8]
    assert [without_timings(x) for x in a] == [without_timings(x) for x in b]
    assert all(json.loads(x)["timings"]["total"] > 0 for x in a)


# -- resume -------------------------------------------------------------------------------------


NOOP_POLICY = {"name": "noop", "adapter_kwargs": {}}
NOOP_ARGS = f"eval --policy noop --tasks {TASK_ID} --horizon 20".split()  # = NOOP_POLICY, horizon 20


def noop() -> Any:
    return build_adapter(builtin_spec("noop"))


def test_existing_ledger_without_resume_is_refused(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(out, noop(), episodes=2, policy=NOOP_POLICY)
    before = (out / LEDGER_FILENAME).read_bytes()
    adapter = FailsOnce(_raise)
    with pytest.raises(RunFolderError, match="already holds a run; pass --resume"):
        run(out, adapter, episodes=3, policy=NOOP_POLICY)
    assert adapter.resets == 0
    assert (out / LEDGER_FILENAME).read_bytes() == before

    result = cli(*NOOP_ARGS, "--num-trials-per-task", "3", "--out-root", str(out))
    assert result.exit_code == 2
    assert " ".join(result.stderr.split()) == (
        f"error: {out} already holds a run; pass --resume to continue it, or choose another --out-root"
    )
    assert (out / LEDGER_FILENAME).read_bytes() == before


def test_resume_with_a_different_protocol_field_is_refused(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(out, noop(), episodes=2, policy=NOOP_POLICY)
    before = {name: (out / name).read_bytes() for name in OUTPUTS}
    argv = [*NOOP_ARGS, *["--num-trials-per-task", "3", "--replan-steps", "20", "--resume"]]
    result = cli(*argv, "--out-root", str(out))
    assert result.exit_code == 2
    assert "refusing to resume" in result.stderr
    assert "protocol field 'replan_steps': run.json has 5, this command gives 20" in result.stderr
    assert {name: (out / name).read_bytes() for name in OUTPUTS} == before


def test_resume_runs_only_the_missing_episodes(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = FailsOnce(_raise)  # episode 0 ends in adapter_error
    run(out, first, episodes=2)
    lines = ledger_lines(out)
    assert first.resets == 2

    second = FailsOnce(_raise, at_query=99)
    result = run(out, second, episodes=4, resume=True)
    assert [r.episode for r in result.ran] == [2, 3]
    assert result.skipped == 2
    assert second.resets == 2  # the policy ran two episodes (which ones it is not told: the ledger says)
    resumed = ledger_lines(out)
    assert resumed[:2] == lines  # finished episodes untouched
    assert [json.loads(x)["episode"] for x in resumed] == [0, 1, 2, 3]
    # No retries: the episode that ended in an adapter error stays as recorded.
    assert [json.loads(x)["status"] for x in resumed] == ["adapter_error", "ok", "ok", "ok"]
    assert json.loads((out / "summary.json").read_text())["episodes"] == 4
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["num_trials_per_task"] == 4 and len(run_json["resumed"]) == 1

    third = FailsOnce(_raise, at_query=99)
    result = run(out, third, episodes=4, resume=True)
    assert (result.ran, result.skipped, third.resets) == ([], 4, 0)
    assert ledger_lines(out) == resumed


def test_torn_last_line_is_dropped_and_its_episode_rerun(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(out, noop(), episodes=3, policy=NOOP_POLICY)
    lines = ledger_lines(out)
    assert len(lines) == 3
    # As if the process was killed in the middle of writing episode 2's line.
    (out / LEDGER_FILENAME).write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])

    class Warnings(RunEvents):
        def __init__(self) -> None:
            self.seen: list[str] = []

        def ledger_warning(self, message: str) -> None:
            self.seen.append(message)

    warnings = Warnings()
    result = run(out, noop(), episodes=3, resume=True, policy=NOOP_POLICY, events=warnings)
    assert [r.episode for r in result.ran] == [2]
    assert result.skipped == 2
    assert any("truncated a torn last line" in w for w in warnings.seen), warnings.seen
    repaired = ledger_lines(out)
    assert len(repaired) == 3 and repaired[2].endswith(b"\n")
    assert repaired[:2] == lines[:2]
    assert without_timings(repaired[2]) == without_timings(lines[2])
    assert [r.episode for r in read_ledger(out / LEDGER_FILENAME)] == [0, 1, 2]


# -- a killed run resumes without losing or repeating an episode ------------------------------------


KILLED_ARGS = f"eval --policy random --tasks {TASK_ID} --num-trials-per-task 4 --horizon 40".split()


def test_killed_run_resumes_to_completion(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    ledger = out / LEDGER_FILENAME
    log = (tmp_path / "first.log").open("wb")
    proc = subprocess.Popen(
        memobench_cmd(*KILLED_ARGS, "--out-root", str(out)),
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=subprocess_env(),
    )
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if ledger.exists() and b"\n" in ledger.read_bytes():
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.005)
        else:
            pytest.fail(f"no ledger line within 120 s or the run ended first: {(tmp_path / 'first.log').read_text()}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
    assert proc.returncode == -signal.SIGKILL
    before = ledger.read_bytes()
    finished = before.splitlines(keepends=True)
    finished = [line for line in finished if line.endswith(b"\n")]
    assert 1 <= len(finished) < 4, "the run finished before it could be killed"
    assert not (out / "summary.json").exists()  # the run never reached its end

    done = run_memobench(*KILLED_ARGS, "--out-root", str(out), "--resume", cwd=tmp_path)
    assert f"({len(finished)} already in the ledger)" in done.stdout.decode()

    after = ledger.read_bytes()
    lines = after.splitlines(keepends=True)
    assert after.endswith(b"\n")
    assert [json.loads(x)["episode"] for x in lines] == [0, 1, 2, 3]
    assert lines[: len(finished)] == finished  # byte-identical
    for name in OUTPUTS:
        assert (out / name).is_file(), name
    assert json.loads((out / "summary.json").read_text())["episodes"] == 4

    # The same episodes run in one uninterrupted in-process sweep are identical, timings apart.
    reference = run(
        tmp_path / "reference",
        build_adapter(builtin_spec("random")),
        episodes=4,
        horizon=40,
        policy={"name": "random", "adapter_kwargs": {}},
    )
    assert [without_timings(x) for x in lines] == [without_timings(r) for r in reference.ran]


# -- the README's RoboMemArena-style example ---------------------------------------------------------


@pytest.mark.render
@pytest.mark.skipif(
    ctypes.util.find_library("EGL") is None,
    reason="the example adapter needs images, which needs EGL (libEGL not found)",
)
def test_robomemarena_example_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "example"
    run_memobench(
        *f"eval --adapter-spec {EXAMPLE_SPEC} --num-trials-per-task 1 --horizon 60".split(),
        *["--tasks", TASK_ID, "--adapter-kwargs", '{"offset": [0.0, 0.0, 0.05]}'],
        *["--out-root", str(out)],
        cwd=REPO,
        MUJOCO_GL="egl",
    )
    assert sorted(p.name for p in out.iterdir()) == OUTPUTS
    [record] = read_ledger(out / LEDGER_FILENAME)
    assert (record.task_id, record.episode, record.seed) == (TASK_ID, 0, 7)
    assert record.status == EpisodeStatus.OK and record.error is None
    assert (record.steps, record.policy_queries, record.end_reason) == (60, 12, "horizon")
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["policy"] == {
        "adapter_spec": EXAMPLE_SPEC,
        "adapter_kwargs": {"offset": [0.0, 0.0, 0.05]},
    }
    assert run_json["protocol"]["horizon"] == 60
    assert json.loads((out / "summary.json").read_text())["episodes"] == 1
    assert (out / "episodes.csv").read_text().splitlines()[1].startswith(f"{TASK_ID},0,7,ok,false,")


CHECKED_ADAPTER = '''
import sys

import numpy as np

sys.path.insert(0, {examples!r})
from robomemarena_adapter import OffsetReachAdapter


class Checked(OffsetReachAdapter):
    """The example, failing the episode (adapter_error) if the images break the contract."""

    def infer_actions(self, obs, prompt, resize_size):
        for key in ("observation/image", "observation/wrist_image"):
            image = obs[key]
            if image.dtype != np.uint8 or image.shape != (resize_size, resize_size, 3):
                raise ValueError(f"{{key}} is {{image.dtype}} {{image.shape}}")
            if image.std() < 1.0:
                raise ValueError(f"{{key}} is blank (mean {{image.mean():.1f}})")
        chunk = super().infer_actions(obs, prompt, resize_size)
        if self.last_image_mean is None:
            raise ValueError("the example did not record the image mean")
        return chunk


def build(**kwargs):
    return Checked(**kwargs)
'''


@pytest.mark.render
@pytest.mark.skipif(
    ctypes.util.find_library("EGL") is None,
    reason="the example adapter needs images, which needs EGL (libEGL not found)",
)
def test_example_adapter_receives_images(tmp_path: Path) -> None:
    spec_file = tmp_path / "checked.py"
    spec_file.write_text(CHECKED_ADAPTER.format(examples=str(REPO / "examples")))
    out = tmp_path / "checked-run"
    run_memobench(
        *f"eval --tasks {TASK_ID} --num-trials-per-task 1 --horizon 10 --resize-size 64".split(),
        *["--adapter-spec", f"{spec_file}:build", "--out-root", str(out)],
        cwd=tmp_path,
        MUJOCO_GL="egl",
    )
    [record] = read_ledger(out / LEDGER_FILENAME)
    assert (record.status, record.error) == (EpisodeStatus.OK, None)
    assert (record.steps, record.policy_queries) == (10, 2)
