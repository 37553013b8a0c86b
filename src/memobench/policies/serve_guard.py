"""What a policy server accepts: a frame size limit and an optional shared token.

``memobench serve`` listens on 127.0.0.1 by default; bound to another
address, anyone who can reach the port can query (and load) the policy. Two
guards, both checked by the websockets library before a message is parsed:

- **Frame size.** A message larger than ``max_frame_bytes`` (default 64 MiB:
  two 224x224 images are 0.3 MB, a cue video of 200 frames about 30 MB) closes
  the connection with code 1009 before its payload is read, so a client
  cannot make the server buffer hundreds of megabytes.
- **Token.** With a token set, the opening handshake must present it, or the
  server answers HTTP 401 and no websocket opens. It may travel as a header,
  ``Authorization: Bearer <token>`` (MEMOBench's client) or ``Authorization:
  Api-Key <token>`` (openpi-client's ``api_key``), or, for clients that cannot
  send headers, as a query parameter: ``ws://host:port/?token=<token>``. A query
  parameter can end up in proxy logs; prefer the header where the client allows.

MEMOBench's client (``--policy remote``) reads the token from the environment
variable :data:`TOKEN_ENV`, never from ``--adapter-kwargs``, which are written to
``run.json``. ``memobench serve --token`` reads the same variable by default.
"""

from __future__ import annotations

import hmac
import http
import os
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_MAX_FRAME_BYTES = 64 * 2**20
TOKEN_ENV = "MEMOBENCH_SERVE_TOKEN"
_SCHEMES = ("bearer", "api-key")
FRAME_TOO_BIG = 1009  # the websocket close code for a message over the limit (RFC 6455)


def presented_token(path: str, headers: Any) -> str | None:
    """The token an opening handshake presents: the ``Authorization`` header (``Bearer`` or
    ``Api-Key`` scheme), else the ``token`` query parameter; None if neither."""
    authorization = headers.get("Authorization")
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() in _SCHEMES and value.strip():
            return value.strip()
    values = parse_qs(urlsplit(path).query).get("token")
    return values[0] if values else None


def require_token(token: str) -> Callable[[Any, Any], Any]:
    """A websockets ``process_request`` hook answering 401 unless the handshake presents ``token``."""
    expected = token.encode()

    def check(connection: Any, request: Any) -> Any:
        given = presented_token(request.path, request.headers)
        if given is not None and hmac.compare_digest(given.encode(), expected):
            return None  # go on with the websocket handshake
        return connection.respond(
            http.HTTPStatus.UNAUTHORIZED,
            f"this policy server needs a token: set {TOKEN_ENV} for memobench's client, "
            "or send 'Authorization: Bearer <token>' or ?token=<token>\n",
        )

    return check


def client_token() -> str | None:
    """The token MEMOBench's client sends: :data:`TOKEN_ENV`, if set and not empty."""
    return os.environ.get(TOKEN_ENV) or None
