"""The adapter contract: chunk validation and the guard (exceptions, timeouts, optional hooks)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import numpy as np
import pytest

from memobench.policies.adapter import (
    ACTION_DIM,
    AdapterError,
    AdapterGuard,
    ChunkLengthError,
    check_replan_steps,
    declared_chunk_length,
    validate_chunk,
)

OBS: dict[str, Any] = {"observation/state": np.zeros(8, dtype=np.float32), "prompt": "p"}


def chunk(rows: int = 50) -> np.ndarray:
    actions = np.zeros((rows, ACTION_DIM))
    actions[:, 0] = np.linspace(-0.5, 0.5, rows)
    actions[:, 6] = -1.0
    return actions


# -- validate_chunk ---------------------------------------------------------------------


def test_valid_chunk_is_returned_as_float64_unchanged() -> None:
    raw = chunk().astype(np.float32)
    out = validate_chunk(raw)
    assert out.dtype == np.float64
    assert out.shape == (50, 7)
    np.testing.assert_array_equal(out, raw.astype(np.float64))


def test_list_of_rows_is_accepted() -> None:
    out = validate_chunk([[0.1, 0, 0, 0, 0, 0, -1], [0, 0.2, 0, 0, 0, 0, 1]])
    assert out.shape == (2, 7)
    assert out[1, 1] == 0.2 and out[1, 6] == 1.0


def test_single_row_chunk_is_accepted() -> None:
    assert validate_chunk(np.ones((1, 7))).shape == (1, 7)


def test_one_dimensional_action_is_rejected() -> None:
    with pytest.raises(AdapterError, match=r"shape \(7,\); expected \[horizon, 7\]"):
        validate_chunk(np.zeros(7))


@pytest.mark.parametrize("shape", [(50, 6), (50, 8), (7, 50), (1, 50, 7)])
def test_wrong_width_or_rank_is_rejected(shape: tuple[int, ...]) -> None:
    with pytest.raises(AdapterError, match=r"expected \[horizon, 7\]") as info:
        validate_chunk(np.zeros(shape))
    assert str(shape) in str(info.value)


def test_action_dim_is_a_parameter() -> None:
    assert validate_chunk(np.zeros((3, 14)), action_dim=14).shape == (3, 14)
    with pytest.raises(AdapterError, match=r"expected \[horizon, 14\]"):
        validate_chunk(np.zeros((3, 7)), action_dim=14)


@pytest.mark.parametrize("raw", [np.zeros((0, 7)), np.empty((0, 7), dtype=np.float32)])
def test_empty_chunk_is_rejected(raw: np.ndarray) -> None:
    with pytest.raises(AdapterError, match="empty chunk"):
        validate_chunk(raw)


def test_empty_list_is_rejected() -> None:
    with pytest.raises(AdapterError, match=r"shape \(0,\)"):
        validate_chunk([])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_value_is_rejected_with_its_position(bad: float) -> None:
    raw = chunk()
    raw[12, 3] = bad
    with pytest.raises(AdapterError, match="non-finite") as info:
        validate_chunk(raw)
    message = str(info.value)
    assert "row 12, column 3" in message
    assert str(bad) in message  # "nan", "inf" or "-inf"


def test_non_finite_is_never_repaired() -> None:
    raw = chunk()
    raw[-1, 6] = np.nan
    with pytest.raises(AdapterError, match="row 49, column 6"):
        validate_chunk(raw)
    assert np.isnan(raw[-1, 6])  # the adapter's array is left as it was


@pytest.mark.parametrize("raw", ["move left", [["a"] * 7], [["0.1"] * 6 + ["open"]], {"x": 1}, object()])
def test_non_numeric_output_is_rejected(raw: Any) -> None:
    with pytest.raises(AdapterError, match="not a numeric array") as info:
        validate_chunk(raw)
    assert type(raw).__name__ in str(info.value)


@pytest.mark.parametrize(
    "raw",
    [
        [[None] * 7],  # np.asarray(..., float64) would turn None into NaN
        np.full((50, 7), "0.5"),  # numeric strings numpy would happily parse
        np.zeros((2, 7), dtype=complex),  # the imaginary part would be dropped silently
        np.zeros((2, 7), dtype=object),
    ],
)
def test_non_numeric_dtype_is_rejected_not_converted(raw: Any) -> None:
    with pytest.raises(AdapterError, match=r"not a numeric array: dtype "):
        validate_chunk(raw)


def test_integer_and_boolean_arrays_are_numeric() -> None:
    out = validate_chunk(np.ones((2, 7), dtype=np.int8))
    assert out.dtype == np.float64 and out.sum() == 14.0
    assert validate_chunk(np.ones((2, 7), dtype=bool)).sum() == 14.0


def test_ragged_rows_are_rejected() -> None:
    with pytest.raises(AdapterError, match="not a numeric array"):
        validate_chunk([[0.0] * 7, [0.0] * 6])


# -- AdapterGuard: calls, errors, timeouts ------------------------------------------------


@pytest.mark.parametrize("value", [1e6, -1.0001, 1.5])
def test_an_action_outside_the_range_is_an_adapter_error_naming_it(value: float) -> None:
    # robosuite would clip it silently and the episode would be scored as if the policy had been valid
    raw = chunk(4)
    raw[2, 3] = value
    raw[3, 6] = 2.0
    with pytest.raises(AdapterError) as info:
        validate_chunk(raw)
    assert str(info.value) == (
        f"infer_actions returned {value:g} at row 2, column 3, outside the action range "
        "[-1, 1] (2 such value(s) in the chunk); runs without --strict-actions clip them instead"
    )


def test_the_range_bounds_themselves_are_valid() -> None:
    raw = np.array([[-1.0, 1.0, 0, 0, 0, 0, 1.0]])
    np.testing.assert_array_equal(validate_chunk(raw), raw)


def test_clip_clips_out_of_range_actions_into_the_range() -> None:
    raw = chunk(3)
    raw[0, 0], raw[1, 6] = 1e6, -7.0
    out = validate_chunk(raw, clip=True)
    assert out[0, 0] == 1.0 and out[1, 6] == -1.0
    np.testing.assert_array_equal(out[2], raw[2])  # in-range rows untouched
    with pytest.raises(AdapterError, match="non-finite"):  # clipping does not excuse NaN
        validate_chunk(np.full((1, 7), np.nan), clip=True)


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_guard_infer_refuses_or_clips_out_of_range_chunks(timeout: float | None) -> None:
    raw = chunk(2)
    raw[1, 2] = 3.0
    guard = AdapterGuard(Scripted(result=raw), timeout=timeout)
    with pytest.raises(AdapterError, match="outside the action range"):
        guard.infer(OBS, "p", 224)
    assert guard.infer(OBS, "p", 224, clip=True)[1, 2] == 1.0


class Scripted:
    """An adapter whose infer_actions returns or raises what the test says."""

    def __init__(self, result: Any = None, error: BaseException | None = None):
        self.result = chunk() if result is None else result
        self.error = error
        self.calls: list[tuple[dict[str, Any], str, int]] = []
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        self.calls.append((obs, prompt, resize_size))
        if self.error is not None:
            raise self.error
        return self.result


class Hanging:
    """infer_actions blocks until released (on the first ``hang_calls`` calls)."""

    def __init__(self, hang_calls: int = 1):
        self.release = threading.Event()
        self.hang_calls = hang_calls
        self.calls = 0
        self.hung_call_returned = False

    def reset(self) -> None:
        pass

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        self.calls += 1
        if self.calls <= self.hang_calls:
            self.release.wait(30)
            self.hung_call_returned = True
        return chunk(3)


@pytest.fixture
def hanging():
    adapter = Hanging()
    yield adapter
    adapter.release.set()  # let the abandoned worker thread finish


@pytest.mark.parametrize("timeout", [None, 0, 5.0])
def test_guard_passes_arguments_and_returns_validated_chunk(timeout: float | None) -> None:
    adapter = Scripted(result=chunk(4).tolist())
    guard = AdapterGuard(adapter, timeout=timeout)
    out = guard.infer(OBS, "open the drawer", 224)
    assert isinstance(out, np.ndarray) and out.shape == (4, 7)
    np.testing.assert_array_equal(out, chunk(4))
    assert adapter.calls == [(OBS, "open the drawer", 224)]
    guard.reset()
    assert adapter.resets == 1


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_exception_becomes_adapter_error_with_the_message(timeout: float | None) -> None:
    guard = AdapterGuard(Scripted(error=ValueError("model weights missing")), timeout=timeout)
    with pytest.raises(AdapterError) as info:
        guard.infer(OBS, "p", 224)
    assert str(info.value) == "infer_actions() raised ValueError: model weights missing"
    assert isinstance(info.value.__cause__, ValueError)


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_a_huge_or_unprintable_exception_is_a_short_adapter_error(timeout: float | None) -> None:
    huge = AdapterGuard(Scripted(error=ValueError("x" * 50_000_000)), timeout=timeout)
    with pytest.raises(AdapterError) as info:
        huge.infer(OBS, "p", 224)
    text = str(info.value)
    assert text.startswith("infer_actions() raised ValueError: xxx") and len(text) < 4200
    assert text.endswith("... (49996000 more characters)")
    odd = AdapterGuard(Scripted(error=Unprintable()), timeout=timeout)
    with pytest.raises(AdapterError) as info:
        odd.infer(OBS, "p", 224)
    assert str(info.value) == "infer_actions() raised Unprintable: (its text could not be made: RuntimeError)"


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_invalid_output_becomes_adapter_error(timeout: float | None) -> None:
    bad = chunk()
    bad[0, 0] = np.nan
    guard = AdapterGuard(Scripted(result=bad), timeout=timeout)
    with pytest.raises(AdapterError, match="non-finite value \\(nan\\) at row 0, column 0"):
        guard.infer(OBS, "p", 224)


def test_after_a_timeout_reset_swaps_in_a_rebuilt_adapter(hanging: Hanging) -> None:
    fresh = Scripted(result=chunk(2))
    guard = AdapterGuard(hanging, timeout=0.5, rebuild=lambda: fresh)
    guard.reset()
    assert guard.adapter is hanging  # nothing timed out yet: no rebuild
    with pytest.raises(AdapterError, match="did not return"):
        guard.infer(OBS, "p", 224)
    guard.reset()  # the hung call still runs on `hanging`; the next episode must not share it
    assert guard.adapter is fresh and fresh.resets == 1
    assert guard.infer(OBS, "p", 224).shape == (2, 7)
    assert hanging.calls == 1


def test_after_a_timeout_without_rebuild_the_adapter_is_kept(hanging: Hanging) -> None:
    guard = AdapterGuard(hanging, timeout=0.5)
    with pytest.raises(AdapterError, match="did not return"):
        guard.infer(OBS, "p", 224)
    guard.reset()
    assert guard.adapter is hanging


def test_a_failing_rebuild_is_an_adapter_error(hanging: Hanging) -> None:
    def rebuild() -> Any:
        raise OSError("checkpoint file vanished")

    guard = AdapterGuard(hanging, timeout=0.5, rebuild=rebuild)
    with pytest.raises(AdapterError, match="did not return"):
        guard.infer(OBS, "p", 224)
    with pytest.raises(
        AdapterError, match="^rebuilding the adapter after a timed-out call raised OSError: checkpoint file vanished$"
    ):
        guard.reset()


def test_reset_exception_names_reset() -> None:
    class BadReset(Scripted):
        def reset(self) -> None:
            raise RuntimeError("cuda out of memory")

    with pytest.raises(AdapterError, match=r"^reset\(\) raised RuntimeError: cuda out of memory$"):
        AdapterGuard(BadReset(), timeout=5.0).reset()


def test_system_exit_in_worker_becomes_adapter_error() -> None:
    guard = AdapterGuard(Scripted(error=SystemExit(3)), timeout=5.0)
    with pytest.raises(AdapterError, match="raised SystemExit"):
        guard.infer(OBS, "p", 224)


def test_system_exit_without_timeout_becomes_adapter_error() -> None:
    guard = AdapterGuard(Scripted(error=SystemExit(3)), timeout=None)
    with pytest.raises(AdapterError, match="raised SystemExit"):
        guard.infer(OBS, "p", 224)


def test_no_timeout_calls_in_the_callers_thread() -> None:
    seen: list[threading.Thread] = []

    class Where(Scripted):
        def infer_actions(self, obs, prompt, resize_size):
            seen.append(threading.current_thread())
            return chunk()

    AdapterGuard(Where(), timeout=0).infer(OBS, "p", 224)
    AdapterGuard(Where(), timeout=2.0).infer(OBS, "p", 224)
    assert seen[0] is threading.current_thread()
    assert seen[1] is not threading.current_thread()


def test_timeout_raises_adapter_error_within_about_the_timeout(hanging: Hanging) -> None:
    guard = AdapterGuard(hanging, timeout=0.3)
    start = time.perf_counter()
    with pytest.raises(AdapterError) as info:
        guard.infer(OBS, "p", 224)
    elapsed = time.perf_counter() - start
    assert str(info.value) == "infer_actions() did not return within --adapter-timeout 0.3 s"
    assert elapsed >= 0.28  # it waited for the timeout
    assert not hanging.hung_call_returned  # and not for the hung call


def test_guard_keeps_working_after_a_hung_call(hanging: Hanging) -> None:
    guard = AdapterGuard(hanging, timeout=0.3)
    with pytest.raises(AdapterError, match="--adapter-timeout"):
        guard.infer(OBS, "p", 224)
    # The hung thread is still blocked; a fresh worker serves the next calls (within the timeout).
    out = guard.infer(OBS, "p", 224)
    guard.reset()
    assert out.shape == (3, 7)
    assert hanging.calls == 2
    assert not hanging.release.is_set()


def test_each_hung_call_times_out_separately() -> None:
    adapter = Hanging(hang_calls=2)
    try:
        guard = AdapterGuard(adapter, timeout=0.2)
        for _ in range(2):
            with pytest.raises(AdapterError, match="within --adapter-timeout 0.2 s"):
                guard.infer(OBS, "p", 224)
        assert guard.infer(OBS, "p", 224).shape == (3, 7)
    finally:
        adapter.release.set()


# -- AdapterGuard: optional hooks and attributes --------------------------------------------


def test_observe_is_called_only_when_the_adapter_has_it() -> None:
    class WithObserve(Scripted):
        def __init__(self):
            super().__init__()
            self.observed: list[dict[str, Any]] = []

        def observe(self, obs: dict[str, Any]) -> None:
            self.observed.append(obs)

    with_observe = WithObserve()
    guard = AdapterGuard(with_observe, timeout=5.0)
    assert guard.has_observe is True
    guard.observe(OBS)
    guard.observe({"step": 1})
    assert with_observe.observed == [OBS, {"step": 1}]

    plain = AdapterGuard(Scripted(), timeout=5.0)
    assert plain.has_observe is False
    plain.observe(OBS)  # a no-op, not an AttributeError


def test_an_observer_sees_the_rollout_unless_it_declines() -> None:
    class Observer(Scripted):
        def observe(self, obs: dict[str, Any]) -> None:
            pass

    assert AdapterGuard(Observer()).observes_rollout is True
    declining = Observer()
    declining.observe_rollout = False  # type: ignore[attr-defined]
    guard = AdapterGuard(declining)
    assert guard.has_observe is True and guard.observes_rollout is False  # the cue still reaches it
    assert AdapterGuard(Scripted()).observes_rollout is False  # nothing to call


def test_non_callable_observe_attribute_is_ignored() -> None:
    adapter = Scripted()
    adapter.observe = "not a method"  # type: ignore[attr-defined]
    guard = AdapterGuard(adapter)
    assert guard.has_observe is False
    guard.observe(OBS)


def test_observe_exception_becomes_adapter_error() -> None:
    class BadObserve(Scripted):
        def observe(self, obs):
            raise KeyError("observation/image")

    with pytest.raises(AdapterError, match=r"^observe\(\) raised KeyError: 'observation/image'$"):
        AdapterGuard(BadObserve(), timeout=5.0).observe(OBS)


def test_optional_attribute_defaults() -> None:
    guard = AdapterGuard(Scripted())
    assert guard.needs_images is True
    assert guard.observe_images is False
    assert guard.observes_rollout is False  # Scripted has no observe
    assert guard.timeout is None


def test_optional_attributes_are_read_from_the_adapter() -> None:
    adapter = Scripted()
    adapter.needs_images = False  # type: ignore[attr-defined]
    adapter.observe_images = True  # type: ignore[attr-defined]
    guard = AdapterGuard(adapter, timeout=2.5)
    assert guard.needs_images is False
    assert guard.observe_images is True
    assert guard.timeout == 2.5


def test_begin_episode_receives_the_generator_only_when_defined() -> None:
    received: list[np.random.Generator] = []

    class Stochastic(Scripted):
        def begin_episode(self, rng: np.random.Generator) -> None:
            received.append(rng)

    rng = np.random.default_rng(1)
    AdapterGuard(Stochastic(), timeout=5.0).begin_episode(rng)
    AdapterGuard(Scripted(), timeout=5.0).begin_episode(rng)  # no hook: nothing happens
    assert received == [rng]


def test_close_is_optional_and_called_when_present() -> None:
    closed: list[bool] = []

    class Closable(Scripted):
        def close(self) -> None:
            closed.append(True)

    AdapterGuard(Closable(), timeout=5.0).close()
    AdapterGuard(Scripted(), timeout=5.0).close()
    assert closed == [True]


def test_close_exception_becomes_adapter_error() -> None:
    class BadClose(Scripted):
        def close(self) -> None:
            raise OSError("socket already closed")

    with pytest.raises(AdapterError, match=r"^close\(\) raised OSError: socket already closed$"):
        AdapterGuard(BadClose()).close()


# -- declared chunk length and the replan interval -------------------------------------------


class Declares:
    """An adapter declaring ``chunk_size`` and/or ``chunk`` (only the ones given)."""

    def __init__(self, **attributes: Any):
        self.__dict__.update(attributes)

    def reset(self) -> None:
        pass

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        return chunk()


def test_declared_chunk_length_reads_chunk_size_then_chunk() -> None:
    assert declared_chunk_length(Declares(chunk_size=16)) == 16
    assert declared_chunk_length(Declares(chunk=50)) == 50  # the built-in policies' attribute
    assert declared_chunk_length(Declares(chunk_size=16, chunk=50)) == 16
    assert declared_chunk_length(Declares(chunk_size=np.int64(8))) == 8
    assert declared_chunk_length(Declares()) is None


@pytest.mark.parametrize("value", [None, 0, -3, True, 2.5, "50", np.zeros(3)])
def test_anything_but_a_positive_integer_is_undeclared(value: Any) -> None:
    assert declared_chunk_length(Declares(chunk_size=value)) is None
    assert declared_chunk_length(Declares(chunk_size=value, chunk=20)) == 20


def test_builtin_policies_declare_their_fifty_row_chunks() -> None:
    from memobench.policies.loader import build_adapter, builtin_spec

    for name in ("noop", "random", "expert"):
        assert declared_chunk_length(build_adapter(builtin_spec(name))) == 50, name


def test_replan_steps_up_to_the_chunk_length_pass() -> None:
    for replan_steps in (1, 5, 16):
        check_replan_steps(Declares(chunk_size=16), replan_steps)
    check_replan_steps(Declares(), 500)  # undeclared: short chunks are counted per episode instead


def test_replan_steps_above_the_chunk_length_are_refused_with_flag_value_and_length() -> None:
    with pytest.raises(ChunkLengthError) as info:
        check_replan_steps(Declares(chunk_size=16), 17)
    assert str(info.value) == (
        "--replan-steps 17 is longer than the policy's action chunk (16 rows): each query could run "
        "at most 16 actions. Use --replan-steps 16 or less."
    )


# -- marking policy calls (a worker's parent reads the mark if the worker dies) ------------------


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_every_policy_call_is_marked_in_the_thread_that_runs_it(timeout: float | None) -> None:
    marks: list[tuple[str, str, bool]] = []  # (call, event, in the caller's thread)

    class Mark:
        def __init__(self, what: str):
            self.what = what

        def __enter__(self):
            marks.append((self.what, "enter", threading.current_thread() is threading.main_thread()))

        def __exit__(self, *exc):
            marks.append((self.what, "exit", threading.current_thread() is threading.main_thread()))

    class Full(Scripted):
        def begin_episode(self, rng) -> None:
            pass

        def observe(self, obs) -> None:
            pass

        def close(self) -> None:
            pass

    guard = AdapterGuard(Full(error=ValueError("boom")), timeout=timeout, mark=Mark)
    guard.reset()
    guard.begin_episode(np.random.default_rng(0))
    guard.observe(OBS)
    with pytest.raises(AdapterError):
        guard.infer(OBS, "p", 224)  # a raising call is unmarked again too
    guard.close()
    calls = ["reset()", "begin_episode()", "observe()", "infer_actions()", "close()"]
    assert [(w, e) for w, e, _ in marks] == [(c, e) for c in calls for e in ("enter", "exit")]
    assert {main for _, _, main in marks} == {timeout is None}


def test_a_rebuild_after_a_timeout_is_marked(hanging: Hanging) -> None:
    marked: list[str] = []

    def mark(what: str):
        marked.append(what)
        return contextlib.nullcontext()

    guard = AdapterGuard(hanging, timeout=0.3, rebuild=lambda: Scripted(), mark=mark)
    with pytest.raises(AdapterError, match="did not return"):
        guard.infer(OBS, "p", 224)
    guard.reset()
    assert marked == ["infer_actions()", "rebuilding the adapter", "reset()"]
