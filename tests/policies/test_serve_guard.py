"""``memobench serve``'s guards on real servers: the frame size limit and the token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import websockets.exceptions
import websockets.sync.client

from memobench.policies.remote import (
    PolicyServer,
    RemotePolicy,
    RemotePolicyError,
    RemotePolicyRefused,
)
from memobench.policies.serve_guard import TOKEN_ENV, presented_token
from memobench.policies.wire import packb, unpackb


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Zeros:
    needs_images = False

    def reset(self):
        pass

    def infer_actions(self, obs, prompt, resize_size):
        return np.zeros((2, 7))


@pytest.fixture
def serve():
    servers = []

    def start(**kwargs) -> int:
        server = PolicyServer(Zeros(), port=0, **kwargs)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def test_a_frame_over_the_limit_is_refused_and_the_server_serves_on(serve, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    said: list[str] = []
    port = serve(max_frame_bytes=2**20, announce=said.append)
    client = RemotePolicy(port=port, retries=3, backoff=0.01)
    try:
        with pytest.raises(RemotePolicyError, match=r"refused a message over its frame size limit \(2\.0 MiB"):
            client.infer_actions({"observation/image": np.zeros(2 * 2**20, np.uint8)}, "p", 224)
        assert client.infer_actions({"observation/image": np.zeros(2**19, np.uint8)}, "p", 224).shape == (2, 7)
    finally:
        client.close()

    def closed() -> list[str]:
        return [message for message in said if message.startswith("closed a connection")]

    deadline = time.monotonic() + 30  # the server announces from its own thread: wait for it, not a race
    while not closed() and time.monotonic() < deadline:
        time.sleep(0.05)
    # Once, not retried: the same message would be refused again.
    assert len(closed()) == 1 and "exceeds limit of 1048576 bytes" in closed()[0]


def test_without_a_token_set_anyone_may_connect(serve, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    client = RemotePolicy(port=serve())
    assert client.infer_actions({}, "p", 224).shape == (2, 7)
    client.close()


def test_a_token_server_refuses_clients_without_the_token(serve, monkeypatch):
    port = serve(token="s3cret")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(RemotePolicyRefused, match=f"refused the connection: no token \\(set {TOKEN_ENV}"):
        RemotePolicy(port=port)
    monkeypatch.setenv(TOKEN_ENV, "guess")
    with pytest.raises(RemotePolicyRefused, match="wrong token"):
        RemotePolicy(port=port)
    monkeypatch.setenv(TOKEN_ENV, "s3cret")
    client = RemotePolicy(port=port)
    assert client.infer_actions({}, "p", 224).shape == (2, 7)
    client.close()


@pytest.mark.parametrize(
    ("path", "headers", "accepted"),
    [
        ("/?token=s3cret", None, True),  # clients that cannot send headers
        ("/", {"Authorization": "Api-Key s3cret"}, True),  # openpi-client's api_key
        ("/", {"Authorization": "Bearer s3cret"}, True),
        ("/?token=s3cre", None, False),
        ("/", {"Authorization": "Basic s3cret"}, False),
        ("/", None, False),
    ],
)
def test_the_token_travels_as_a_header_or_a_query_parameter(serve, path, headers, accepted):
    uri = f"ws://127.0.0.1:{serve(token='s3cret')}{path}"
    if not accepted:
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            websockets.sync.client.connect(uri, additional_headers=headers)
        assert refused.value.response.status_code == 401
        return
    with websockets.sync.client.connect(uri, additional_headers=headers) as ws:
        assert unpackb(ws.recv())["server"] == "memobench"
        ws.send(packb({"prompt": "p"}))
        assert unpackb(ws.recv())["actions"].shape == (2, 7)


def test_presented_token():
    assert presented_token("/?a=1&token=x%20y", {}) == "x y"
    assert presented_token("/?token=q", {"Authorization": "bearer h"}) == "h"
    assert presented_token("/", {"Authorization": "Bearer "}) is None


def wait_for_port(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_cli_binds_loopback_and_takes_the_token_from_the_environment(monkeypatch):
    port = free_port()
    env = {**os.environ, TOKEN_ENV: "from-env", "COLUMNS": "300"}  # the banner on one line
    command = ["serve", "--policy", "noop", "--port", str(port), "--max-frame-mb", "1"]
    server = subprocess.Popen(
        [sys.executable, "-c", f"from memobench.cli import app; app({command!r})"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = server.stderr.readline()
        assert f"on ws://127.0.0.1:{port}" in banner and "token required" in banner and "up to 1 MiB" in banner
        wait_for_port(port)  # the banner comes just before the server binds
        monkeypatch.delenv(TOKEN_ENV, raising=False)
        with pytest.raises(RemotePolicyRefused):
            RemotePolicy(port=port)
        monkeypatch.setenv(TOKEN_ENV, "from-env")
        client = RemotePolicy(port=port)
        assert client.infer_actions({}, "p", 224).shape[1] == 7
        client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
