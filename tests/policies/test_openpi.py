"""Interop with openpi: its stock policy server behind ``--policy remote``, its client in front of ``memobench serve``.

openpi's ``serve_policy.py`` runs a websocket server that sends its policy's metadata on
connect, hands every binary frame it receives to ``policy.infer`` and, when that raises,
sends the traceback as a text frame and closes the connection (code 1011). It knows no
control messages. :class:`StockOpenpiServer` behaves the same way around a LIBERO-style
policy; openpi's own client (PyPI ``openpi-client``) is used as is.
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import numpy as np
import pytest
import websockets.exceptions
import websockets.sync.server

from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.policies.adapter import AdapterGuard, policy_receives
from memobench.policies.builtin import RandomPolicy
from memobench.policies.remote import OPENPI_KEYS, PolicyServer, RemotePolicy, RemotePolicyError
from memobench.policies.wire import packb, unpackb

CHUNK = 10
IMAGE = np.full((224, 224, 3), 128, np.uint8)
HARNESS_OBS = {  # what the harness hands an adapter in the cue query of a cue task (its chunk is discarded)
    "observation/image": IMAGE,
    "observation/wrist_image": IMAGE,
    "observation/state": np.zeros(8, np.float32),
    "prompt": "open every drawer",
    "cue": True,
    "prompt_video": np.zeros((3, 224, 224, 3), np.uint8),
}


class StockOpenpiServer:
    """A websocket server behaving like openpi's stock one around a LIBERO policy.

    Its ``infer`` is stricter than openpi's ``LiberoInputs`` (which raises KeyError on a
    missing key and drops the others): any key set but ``accepts`` raises, so a test
    passing through it also shows that nothing else was sent.
    """

    def __init__(self, metadata: dict | None = None, accepts: tuple[str, ...] = OPENPI_KEYS):
        self.metadata = {"action_horizon": CHUNK} if metadata is None else metadata
        self.accepts = accepts
        self.received: list[tuple[str, ...]] = []  # the keys of every frame handed to infer
        self._server = websockets.sync.server.serve(self._handle, "127.0.0.1", 0, compression=None, max_size=None)
        self.port = self._server.socket.getsockname()[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def infer(self, obs: dict) -> dict:
        self.received.append(tuple(sorted(obs)))
        if set(obs) != set(self.accepts):
            raise KeyError(f"expected the keys {sorted(self.accepts)}, got {sorted(obs)}")
        for key in ("observation/image", "observation/wrist_image"):
            if obs[key].dtype != np.uint8 or obs[key].shape != (224, 224, 3) or obs[key].std() == 0:
                raise ValueError(f"{key}: a blank or mis-shaped image ({obs[key].dtype} {obs[key].shape})")
        if obs["observation/state"].shape != (8,) or not obs["prompt"]:
            raise ValueError("an 8-d state and a prompt are required")
        actions = np.zeros((CHUNK, 7), np.float32)
        actions[:, 6] = -1.0
        return {"actions": actions, "server_timing": {"infer_ms": 1.0}}

    def _handle(self, connection) -> None:
        connection.send(packb(self.metadata))
        while True:
            try:
                reply = self.infer(unpackb(connection.recv()))
                connection.send(packb(reply))
            except websockets.exceptions.ConnectionClosed:
                return
            except Exception:
                connection.send(traceback.format_exc())
                connection.close(code=1011, reason="Internal server error. Traceback included in previous frame.")
                return

    def stop(self) -> None:
        self._server.shutdown()


@pytest.fixture
def stock():
    server = StockOpenpiServer()
    yield server
    server.stop()


def textured(obs: dict) -> dict:
    """``obs`` with images that are not blank (the stock policy refuses blank ones)."""
    noise = np.random.default_rng(0).integers(0, 256, IMAGE.shape, dtype=np.uint8)
    return {**obs, "observation/image": noise, "observation/wrist_image": noise}


def test_a_stock_server_gets_no_control_frames_and_exactly_the_openpi_keys(stock):
    client = RemotePolicy(port=stock.port)
    try:
        assert client.control_messages == frozenset() and client.needs_images
        client.reset()
        client.begin_episode(np.random.default_rng(0))
        assert stock.received == []  # nothing reached the model before the first query
        actions = client.infer_actions(textured(HARNESS_OBS), "open every drawer", 224)
    finally:
        client.close()
    assert actions.shape == (CHUNK, 7)
    assert stock.received == [tuple(sorted(OPENPI_KEYS))]  # no resize_size, cue flag or cue video


def test_a_stock_server_error_is_a_clear_error_and_the_next_query_reconnects(stock):
    client = RemotePolicy(port=stock.port, backoff=0.01)
    try:
        with pytest.raises(RemotePolicyError, match=r"failed:\n(.|\n)*ValueError: observation/image: a blank"):
            client.infer_actions(HARNESS_OBS, "open every drawer", 224)  # blank images: the policy raises
        actions = client.infer_actions(textured(HARNESS_OBS), "open every drawer", 224)  # the server closed: reconnect
    finally:
        client.close()
    assert actions.shape == (CHUNK, 7) and len(stock.received) == 2


def test_the_cue_video_goes_only_to_a_server_that_asks_for_it():
    server = StockOpenpiServer(metadata={"wants_prompt_video": True}, accepts=(*OPENPI_KEYS, "prompt_video"))
    client = RemotePolicy(port=server.port)
    try:
        client.infer_actions(textured(HARNESS_OBS), "open every drawer", 224)
        later = {k: v for k, v in textured(HARNESS_OBS).items() if k not in ("prompt_video", "cue")}  # executed ones
        with pytest.raises(RemotePolicyError, match="KeyError"):
            client.infer_actions(later, "open every drawer", 224)
    finally:
        client.close(), server.stop()
    assert "prompt_video" in server.received[0]


def test_memobench_serve_announces_its_control_messages_and_gets_the_harness_keys():
    server = PolicyServer(RandomPolicy(chunk=4), port=0)
    client = RemotePolicy(port=server.start())
    try:
        assert client.control_messages == {"reset", "begin_episode"} and client.wants_prompt_video
        message = client.query_message(HARNESS_OBS, "open every drawer", 128)
        client.reset()
        client.begin_episode(np.random.default_rng(0))
        assert client.infer_actions(HARNESS_OBS, "open every drawer", 128).shape == (4, 7)
    finally:
        client.close(), server.stop()
    assert set(message) == {*HARNESS_OBS, "resize_size"} and message["resize_size"] == 128
    assert not {"episode", "step"} & set(message)  # no index, no clock


def test_mirror_images_flips_every_image_left_right_and_nothing_else():
    server = StockOpenpiServer(metadata={"wants_prompt_video": True}, accepts=(*OPENPI_KEYS, "prompt_video"))
    plain, mirrored = RemotePolicy(port=server.port), RemotePolicy(port=server.port, mirror_images=True)
    try:
        video = np.random.default_rng(1).integers(0, 256, (3, 224, 224, 3), dtype=np.uint8)
        obs = {**textured(HARNESS_OBS), "prompt_video": video}
        a, b = plain.query_message(obs, "p", 224), mirrored.query_message(obs, "p", 224)
    finally:
        plain.close(), mirrored.close(), server.stop()
    for key in ("observation/image", "observation/wrist_image"):
        assert np.array_equal(b[key], a[key][:, ::-1]) and not np.array_equal(b[key], a[key])
    assert np.array_equal(b["prompt_video"], video[:, :, ::-1]) and np.array_equal(a["prompt_video"], video)
    assert np.array_equal(b["observation/state"], a["observation/state"]) and b["prompt"] == a["prompt"]


def test_only_a_server_that_lists_begin_episode_is_given_the_episode_generator(stock):
    server = PolicyServer(RandomPolicy(chunk=4), port=0)
    memobench, openpi = RemotePolicy(port=server.start()), RemotePolicy(port=stock.port)
    try:
        assert policy_receives(memobench) == {"episode_rng": True, "privileged": False}
        assert policy_receives(openpi) == {"episode_rng": False, "privileged": False}
        guard = AdapterGuard(openpi)
        guard.begin_episode(np.random.default_rng(0))  # what the harness calls: nothing is sent
        assert not guard.takes_episode_rng and stock.received == []
    finally:
        memobench.close(), openpi.close(), server.stop()


def test_metadata_that_is_not_a_list_of_control_messages_counts_as_none():
    server = StockOpenpiServer(metadata={"control_messages": "reset", "wants_prompt_video": "yes"})
    client = RemotePolicy(port=server.port)
    try:
        assert client.control_messages == frozenset() and not client.wants_prompt_video
    finally:
        client.close(), server.stop()


# -- openpi's own client against memobench serve ---------------------------------------------


class NeedsState:
    """Camera-free: a chunk from the state, a KeyError without one (as openpi's transforms raise)."""

    needs_images = False

    def reset(self) -> None:
        pass

    def infer_actions(self, obs, prompt, resize_size):
        return np.tile(np.clip(obs["observation/state"][:7], -1, 1), (6, 1))


# openpi-client 0.1.2 opens its connection the way current websockets deprecates: its warning, not ours.
@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager:DeprecationWarning")
def test_openpi_client_gets_actions_from_memobench_serve():
    websocket_client_policy = pytest.importorskip(
        "openpi_client.websocket_client_policy", reason="openpi-client is not installed (make install adds it)"
    )
    server = PolicyServer(NeedsState(), port=0, token="s3cret")
    port = server.start()
    try:
        client = websocket_client_policy.WebsocketClientPolicy(host="127.0.0.1", port=port, api_key="s3cret")
        assert client.get_server_metadata()["server"] == "memobench"
        state = np.linspace(-0.5, 0.5, 8).astype(np.float32)
        reply = client.infer({"observation/state": state, "prompt": "open every drawer"})
        np.testing.assert_allclose(reply["actions"], np.tile(state[:7], (6, 1)))
        with pytest.raises(RuntimeError, match="Error in inference server:\n(.|\n)*KeyError"):
            client.infer({"prompt": "no state"})
    finally:
        server.stop()


# -- a whole episode through `memobench eval --policy remote` ---------------------------------


@pytest.mark.sim
@pytest.mark.render
@pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="openpi policies need images: EGL not found")
def test_memobench_eval_runs_an_episode_against_a_stock_openpi_server(stock, tmp_path: Path):
    memobench = Path(sys.executable).parent / "memobench"
    if not memobench.exists():
        pytest.skip(f"the memobench console script is not installed next to {sys.executable}")
    out = tmp_path / "run"
    command = [str(memobench), "eval", "--policy", "remote", "--adapter-kwargs", f'{{"port": {stock.port}}}']
    command += ["--tasks", "T03-check-all-drawers", "--num-trials-per-task", "1", "--horizon", "10"]
    command += ["--out-root", str(out)]
    env = {**os.environ, "MUJOCO_GL": "egl", "COLUMNS": "200"}
    done = subprocess.run(command, capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    [record] = read_ledger(out / LEDGER_FILENAME)
    assert record.status == "ok" and record.error is None
    assert (record.steps, record.policy_queries, record.end_reason) == (10, 2, "horizon")
    assert stock.received == [tuple(sorted(OPENPI_KEYS))] * 2
