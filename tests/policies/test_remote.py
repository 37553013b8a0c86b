"""Remote policies: the openpi wire format, ``memobench serve``'s server and the client adapter."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from memobench.core.suite import Suite
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.builtin import RandomPolicy
from memobench.policies.remote import PolicyServer, RemotePolicy, RemotePolicyError
from memobench.policies.wire import packb, unpackb


@pytest.mark.parametrize(
    "value",
    [
        np.zeros((2, 3, 4), np.uint8),
        np.array([1.5, np.nan, np.inf], np.float32),
        np.arange(6, dtype=np.int64),
        np.float32(2.5),
        {"a": [np.array([True, False]), "text", 3]},
    ],
)
def test_wire_round_trips_arrays_scalars_and_nesting(value):
    back = unpackb(packb(value))
    if isinstance(value, dict):
        np.testing.assert_array_equal(back["a"][0], value["a"][0])
        assert back["a"][1:] == ["text", 3]
    else:
        np.testing.assert_array_equal(back, value)
        assert np.asarray(back).dtype == np.asarray(value).dtype


def test_wire_uses_the_openpi_array_convention():
    raw = __import__("msgpack").unpackb(packb(np.ones((2, 2), np.float32)))
    assert raw[b"__ndarray__"] is True and raw[b"dtype"] == "<f4" and list(raw[b"shape"]) == [2, 2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_a_clear_error():
    with pytest.raises(RemotePolicyError, match="cannot reach the policy server at ws://127.0.0.1"):
        RemotePolicy(port=free_port(), connect_timeout=2)


def test_experts_cannot_be_served():
    from memobench.experts.policy import ExpertPolicy

    with pytest.raises(ValueError, match="privileged"):
        PolicyServer(ExpertPolicy(), port=0)


class CountsSinceReset:
    """A stateful policy: its chunk holds how many queries it has had since its last reset."""

    needs_images = False

    def __init__(self):
        self.queries = 0

    def reset(self):
        self.queries = 0

    def infer_actions(self, obs, prompt, resize_size):
        self.queries += 1
        return np.full((1, 7), float(self.queries))


@pytest.mark.parametrize("per_connection", [False, True])
def test_per_connection_keeps_two_workers_episodes_apart(per_connection):
    said: list[str] = []
    server = PolicyServer(
        CountsSinceReset(), port=0, announce=said.append, per_connection=CountsSinceReset if per_connection else None
    )
    port = server.start()
    a, b = RemotePolicy(port=port), RemotePolicy(port=port)
    try:
        a.reset()
        first = a.infer_actions({}, "p", 224)[0, 0]
        b.reset()  # another worker starts its episode mid-way through a's
        second = a.infer_actions({}, "p", 224)[0, 0]
    finally:
        a.close(), b.close(), server.stop()
    if per_connection:
        assert (first, second) == (1.0, 2.0) and said == []
    else:  # the shared adapter's memory was wiped by b: what --per-connection is for, and what it says
        assert (first, second) == (1.0, 1.0)
        assert said and "--per-connection" in said[0]


def run(out, adapter, policy_name, horizon=20):
    task = Suite.load().get("T03-check-all-drawers")
    request = RunRequest(
        tasks=[task],
        num_trials_per_task=2,
        protocol=Protocol(horizon=horizon, adapter_timeout=0),
        out_root=out,
        policy={"name": policy_name, "adapter_kwargs": {}},
    )
    evaluate(request, adapter)
    records = read_ledger(out / LEDGER_FILENAME)
    return [r.model_dump(mode="json", exclude={"timings"}) for r in records]


@pytest.mark.sim
def test_a_served_policy_gives_the_in_process_ledger_and_a_dying_server_an_adapter_error(tmp_path):
    server = PolicyServer(RandomPolicy(), port=0)
    port = server.start()
    try:
        client = RemotePolicy(port=port)
        assert client.needs_images is False  # from the server's metadata
        remote = run(tmp_path / "remote", client, "remote")
        client.close()
    finally:
        server.stop()
    local = run(tmp_path / "local", RandomPolicy(), "random")
    assert remote == local and all(r["status"] == "ok" for r in local)

    class StopsServing(RandomPolicy):  # the server goes away during the first episode
        calls = 0

        def infer_actions(self, obs, prompt, resize_size):
            StopsServing.calls += 1
            if StopsServing.calls == 2:
                dying.stop()
            return super().infer_actions(obs, prompt, resize_size)

    dying = PolicyServer(StopsServing(), port=0)
    client = RemotePolicy(port=dying.start(), retries=1, backoff=0.01)
    records = run(tmp_path / "dying", client, "remote")
    assert [r["status"] for r in records] == ["adapter_error", "adapter_error"]  # the sweep went on
    assert "is gone" in records[0]["error"] and f"ws://127.0.0.1:{dying.port}" in records[0]["error"]


def wait_until(condition, seconds: float = 3.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_the_probe_connection_is_closed_once_the_metadata_is_read():
    """A client reads the server's metadata when it is built (the run's main process does, before its
    workers connect): it holds no connection open until it queries."""
    server = PolicyServer(CountsSinceReset(), port=0, announce=lambda message: None)
    port = server.start()
    try:
        client = RemotePolicy(port=port)
        assert client.control_messages  # it read the metadata
        assert wait_until(lambda: not server._connections)
        client.reset()  # and connects again when it needs to
        assert client.infer_actions({}, "p", 224)[0, 0] == 1.0
        client.close()
    finally:
        server.stop()


def test_a_client_that_drops_is_one_info_line_not_a_traceback(caplog):
    import logging
    import socket

    import websockets.sync.client

    server = PolicyServer(CountsSinceReset(), port=0, announce=lambda message: None)
    port = server.start()
    try:
        with caplog.at_level(logging.INFO):
            ws = websockets.sync.client.connect(f"ws://127.0.0.1:{port}", compression=None)
            ws.recv()  # the metadata
            ws.socket.shutdown(socket.SHUT_RDWR)  # gone without a close frame (a killed worker)
            ws.socket.close()
            assert wait_until(lambda: not server._connections)
    finally:
        server.stop()
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert any("disconnected" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)
