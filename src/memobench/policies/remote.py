"""Policies behind a websocket: the client adapter and ``memobench serve``'s server.

Protocol (the openpi-client convention, plus two control messages for servers that ask):

1. On connect the server sends its metadata (a dict). What the client reads from it:
   ``needs_images`` (default True), ``control_messages`` (the control messages the
   server understands; none by default) and ``wants_prompt_video`` (default False).
   ``memobench serve`` lists both control messages and asks for the cue video;
   openpi's stock server sends its policy's metadata, which says none of this.
2. Each query: the client sends the observation dict, the server answers
   ``{"actions": array [horizon, 7]}`` (other reply keys, such as openpi's
   ``server_timing``, are ignored). A server without control messages (openpi's,
   which hands every frame to ``policy.infer``) gets exactly the openpi LIBERO keys,
   :data:`OPENPI_KEYS`; one that lists control messages speaks MEMOBench's protocol
   and also gets :data:`HARNESS_KEYS` (``resize_size``, and ``cue`` in the cue query).
   No message carries the episode's index or step. ``prompt_video`` (the cue, in the cue
   query only, whose chunk the harness discards) goes only to a server that wants it.
3. ``{"__ctrl__": "reset"}`` before every episode (a stateful policy clears
   its memory) and ``{"__ctrl__": "begin_episode", "rng_state": ...}`` with
   the episode generator's state, so a stochastic policy served remotely
   draws exactly what it would draw in-process; each only to a server that lists
   it (``run.json`` records whether the generator was sent: its state is a function
   of the episode's seed). Both are answered ``{"ok": True}``.

A server error comes back as a text frame holding the traceback (openpi's server
then closes the connection; the next query reconnects). The client
connects with a timeout, retries a failed exchange a bounded number of times
with exponential backoff (reconnecting), then raises :class:`RemotePolicyError`
naming the server; the harness records that episode as ``adapter_error``.
A frame over the server's size limit, or a missing or wrong token, is not
retried (see :mod:`memobench.policies.serve_guard`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from memobench.policies.serve_guard import (
    DEFAULT_MAX_FRAME_BYTES,
    FRAME_TOO_BIG,
    TOKEN_ENV,
    client_token,
    require_token,
)
from memobench.policies.wire import packb, unpackb

log = logging.getLogger(__name__)

DEFAULT_PORT = 8000
# What openpi's LIBERO input transform reads; a stock server gets these and nothing else.
OPENPI_KEYS = ("observation/image", "observation/wrist_image", "observation/state", "prompt")
# The harness's extras, only for servers that speak MEMOBench's protocol (list control messages).
HARNESS_KEYS = ("resize_size", "cue")
CONTROL_MESSAGES = ("reset", "begin_episode")


class RemotePolicyError(RuntimeError):
    """The policy server cannot be reached, went away, or failed; the message says which."""


class RemotePolicyRefused(RemotePolicyError):
    """The policy server refused the client (no or wrong token): retrying cannot help."""


def _rng_state(rng: np.random.Generator) -> str:
    return json.dumps(rng.bit_generator.state)  # 128-bit integers: JSON, not msgpack ints


def _rng_from_state(state: str) -> np.random.Generator:
    data = json.loads(state)
    bit_generator = getattr(np.random, data["bit_generator"])()
    bit_generator.state = data
    return np.random.Generator(bit_generator)


class RemotePolicy:
    """An adapter whose policy runs in a websocket server (``memobench serve`` or openpi's).

    What it sends depends on the server's connect metadata (the module's protocol): a
    server that lists no control messages, such as openpi's ``serve_policy.py``, is sent
    one frame per query holding exactly :data:`OPENPI_KEYS`, and ``reset`` and
    ``begin_episode`` send nothing.

    A token for the server is read from the environment variable ``MEMOBENCH_SERVE_TOKEN``
    and sent as ``Authorization: Bearer <token>``.

    ``mirror_images`` flips every image it sends left-right (camera frames and the cue
    video). MEMOBench's frames are upright as the camera sees them; openpi's and OpenVLA's
    LIBERO pipelines rotate robosuite's bottom-up read-out by 180 degrees, i.e. upright and
    mirrored, so a checkpoint fine-tuned on their LIBERO data expects mirrored frames.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        connect_timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        needs_images: bool | None = None,
        mirror_images: bool = False,
    ):
        self.mirror_images = bool(mirror_images)
        self.uri = host if host.startswith("ws") else f"ws://{host}:{port}"
        self.connect_timeout, self.retries, self.backoff = connect_timeout, retries, backoff
        self._ws = None
        self.metadata = self._connect()
        # Only probed here (the run's main process reads the metadata, its workers query): the
        # connection is not held open, the first exchange opens one again.
        self._close_socket()
        self.needs_images = bool(self.metadata.get("needs_images", True)) if needs_images is None else needs_images
        listed = self.metadata.get("control_messages")
        self.control_messages = (
            frozenset(m for m in listed if isinstance(m, str)) if isinstance(listed, list) else frozenset()
        )
        self.wants_prompt_video = self.metadata.get("wants_prompt_video") is True
        if not self.control_messages:
            log.info(
                "the policy server at %s lists no control messages (openpi's stock server): "
                "sending it observations only, with the keys %s",
                self.uri,
                ", ".join(OPENPI_KEYS),
            )

    # -- connection ------------------------------------------------------------------
    def _connect(self) -> dict[str, Any]:
        import websockets.exceptions
        import websockets.sync.client

        token = client_token()
        try:
            connection = websockets.sync.client.connect(
                self.uri,
                open_timeout=self.connect_timeout,
                compression=None,
                max_size=DEFAULT_MAX_FRAME_BYTES,
                additional_headers={"Authorization": f"Bearer {token}"} if token else None,
            )
            # Entered like a context manager, closed by _close_socket: websockets >= 17.1
            # deprecates a connection that never entered one.
            self._ws = connection.__enter__()
            metadata = unpackb(self._ws.recv(timeout=self.connect_timeout))
        except websockets.exceptions.InvalidStatus as e:
            self._close_socket()
            if e.response.status_code == 401:
                raise RemotePolicyRefused(
                    f"the policy server at {self.uri} refused the connection: "
                    f"{'wrong' if token else 'no'} token (set {TOKEN_ENV} to the "
                    "server's)"
                ) from None
            raise RemotePolicyError(f"cannot reach the policy server at {self.uri}: {e}") from e
        except Exception as e:
            self._close_socket()
            raise RemotePolicyError(f"cannot reach the policy server at {self.uri}: {type(e).__name__}: {e}") from e
        return metadata if isinstance(metadata, dict) else {}

    def _exchange(self, message: dict[str, Any]) -> Any:
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                if self._ws is None:
                    self._connect()
                self._ws.send(packb(message))
                reply = self._ws.recv()
            except RemotePolicyRefused:
                raise
            except RemotePolicyError as e:
                last = e
            except Exception as e:  # the connection dropped: reconnect and retry
                too_big = getattr(getattr(e, "rcvd", None), "code", None) == FRAME_TOO_BIG
                self._close_socket()
                if too_big:  # the same message would be refused again
                    raise RemotePolicyError(
                        f"the policy server at {self.uri} refused a message over its frame "
                        f"size limit ({len(packb(message)) / 2**20:.1f} MiB; "
                        "`memobench serve --max-frame-mb` raises it)"
                    ) from None
                last = e
            else:
                if isinstance(reply, str):  # the server's own error, with its traceback: not retried
                    raise RemotePolicyError(f"the policy server at {self.uri} failed:\n{reply}")
                return unpackb(reply)
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise RemotePolicyError(
            f"the policy server at {self.uri} is gone ({self.retries + 1} attempts): {type(last).__name__}: {last}"
        )

    def _close_socket(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.close()
            self._ws = None

    # -- the adapter contract ------------------------------------------------------------
    def reset(self) -> None:
        """Tell the server a new episode starts; a no-op for a server that does not list ``reset``."""
        if "reset" in self.control_messages:
            self._exchange({"__ctrl__": "reset"})

    @property
    def wants_episode_rng(self) -> bool:
        """Whether the server lists ``begin_episode``: only then is it sent the episode's generator."""
        return "begin_episode" in self.control_messages

    def begin_episode(self, rng: np.random.Generator) -> None:
        """Hand the server the episode's generator; a no-op for a server that does not list it."""
        if "begin_episode" in self.control_messages:
            self._exchange({"__ctrl__": "begin_episode", "rng_state": _rng_state(rng)})

    def query_message(self, obs: dict[str, Any], prompt: str, resize_size: int) -> dict[str, Any]:
        """What this server is sent for a query: the openpi keys, plus what it understands or asks for."""
        message = {k: obs[k] for k in OPENPI_KEYS if k in obs}
        message["prompt"] = prompt
        if self.control_messages:
            message.update({k: obs[k] for k in HARNESS_KEYS if k in obs}, resize_size=resize_size)
        if self.wants_prompt_video and "prompt_video" in obs:
            message["prompt_video"] = obs["prompt_video"]
        if self.mirror_images:
            for key in ("observation/image", "observation/wrist_image", "prompt_video"):
                if key in message:  # [..., height, width, channels]: flip the width axis
                    message[key] = np.ascontiguousarray(np.asarray(message[key])[..., ::-1, :])
        return message

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        reply = self._exchange(self.query_message(obs, prompt, resize_size))
        if not isinstance(reply, dict) or "actions" not in reply:
            raise RemotePolicyError(f"the policy server at {self.uri} answered without 'actions': {reply!r:.200}")
        return reply["actions"]

    def close(self) -> None:
        self._close_socket()


def remote_policy(**kwargs: Any) -> RemotePolicy:
    """Factory for ``--policy remote --adapter-kwargs '{"host": ..., "port": ...}'``."""
    return RemotePolicy(**kwargs)


# -- the server ------------------------------------------------------------------------


class PolicyServer:
    """Serves an adapter over websocket; each connection is handled one message at a time.

    Several clients (env workers) may connect. By default they share one
    adapter, with calls serialised by a lock (an adapter need not be
    thread-safe): right for a stateless policy, and a model loaded once.
    A policy that keeps per-episode state must not be shared, or the
    workers' ``reset``/``infer`` calls interleave in one memory: pass
    ``per_connection`` (the adapter factory) and every connection gets an
    adapter of its own. ``announce`` receives operator messages (a second
    client sharing the adapter).

    A message over ``max_frame_bytes`` closes its connection (code 1009) unread;
    with a ``token``, a client must present it when connecting or is answered
    HTTP 401 (:mod:`memobench.policies.serve_guard`).
    """

    def __init__(
        self,
        adapter: Any,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        per_connection: Callable[[], Any] | None = None,
        announce: Callable[[str], None] = lambda message: None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        token: str | None = None,
    ):
        if getattr(adapter, "privileged", False):
            raise ValueError(
                "a privileged adapter (the built-in experts) reads simulator objects and "
                "cannot be served over the network"
            )
        if max_frame_bytes < 1:
            raise ValueError(f"the frame size limit must be positive, got {max_frame_bytes} bytes")
        self._serve_options = {
            "compression": None,
            "max_size": max_frame_bytes,
            "process_request": require_token(token) if token else None,
        }
        self.adapter, self.host, self.port = adapter, host, port
        self._per_connection, self._announce = per_connection, announce
        self._lock = threading.Lock()
        self._server = None
        self._connections: set = set()

    def metadata(self) -> dict[str, Any]:
        """The connect frame: what this server understands and wants (see the module's protocol)."""
        return {
            "server": "memobench",
            "needs_images": bool(getattr(self.adapter, "needs_images", True)),
            "control_messages": list(CONTROL_MESSAGES),
            "wants_prompt_video": True,
        }

    def _answer(self, adapter: Any, lock: threading.Lock, message: dict) -> Any:
        control = message.get("__ctrl__")
        with lock:
            if control == "reset":
                adapter.reset()
                return {"ok": True}
            if control == "begin_episode":
                begin = getattr(adapter, "begin_episode", None)
                if begin is not None:
                    begin(_rng_from_state(message["rng_state"]))
                return {"ok": True}
            actions = adapter.infer_actions(message, message.get("prompt", ""), int(message.get("resize_size", 224)))
            return {"actions": np.asarray(actions)}

    def _handle(self, connection) -> None:
        import websockets.exceptions

        peer = connection.remote_address[0]  # read now: a closed socket no longer knows it
        self._connections.add(connection)
        if self._per_connection is None and len(self._connections) == 2:
            self._announce(
                "two clients now share one adapter; if the policy keeps per-episode state, "
                "serve it with --per-connection"
            )
        try:
            own = self._per_connection is not None  # an adapter of its own needs no lock shared with others
            adapter, lock = (self._per_connection(), threading.Lock()) if own else (self.adapter, self._lock)
            connection.send(packb(self.metadata()))
            for raw in connection:
                try:
                    reply = packb(self._answer(adapter, lock, unpackb(raw)))
                except Exception:
                    connection.send(traceback.format_exc())
                    continue
                connection.send(reply)
        except websockets.exceptions.ConnectionClosedError as e:
            if e.sent is not None and e.sent.code == FRAME_TOO_BIG:  # the guard did its job: no traceback
                self._announce(f"closed a connection from {peer}: {e.sent.reason}")
            else:  # gone without a close frame (a killed worker, a dropped network): nothing to fix here
                log.info("a client from %s disconnected (%s)", peer, e)
        finally:
            self._connections.discard(connection)

    def start(self) -> int:
        """Start serving in a background thread; returns the bound port (``port=0`` picks a free one)."""
        import websockets.sync.server

        self._server = websockets.sync.server.serve(self._handle, self.host, self.port, **self._serve_options)
        self.port = self._server.socket.getsockname()[1]
        threading.Thread(target=self._server.serve_forever, daemon=True, name="memobench-serve").start()
        return self.port

    def serve_forever(self) -> None:
        import websockets.sync.server

        with websockets.sync.server.serve(self._handle, self.host, self.port, **self._serve_options) as server:
            self._server = server
            server.serve_forever()

    def stop(self) -> None:
        """Stop listening and drop every open connection (clients see the server go away)."""
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        for connection in list(self._connections):
            connection.close()
