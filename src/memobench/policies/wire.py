"""The wire format of remote policies: msgpack with numpy arrays, in the openpi-client convention.

An array travels as ``{b"__ndarray__": True, b"data": bytes, b"dtype": str,
b"shape": tuple}``, a numpy scalar as ``{b"__npgeneric__": True, b"data":
value, b"dtype": str}``, so an openpi policy server or client understands
MEMOBench's messages and the other way round.
"""

from __future__ import annotations

from typing import Any

import msgpack
import numpy as np


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "VOc":
            raise TypeError(f"cannot send arrays of dtype {obj.dtype}")
        return {
            b"__ndarray__": True,
            b"data": np.ascontiguousarray(obj).tobytes(),
            b"dtype": obj.dtype.str,
            b"shape": list(obj.shape),
        }
    if isinstance(obj, np.generic):
        return {b"__npgeneric__": True, b"data": obj.item(), b"dtype": obj.dtype.str}
    raise TypeError(f"cannot send {type(obj).__name__} to a policy server")


def _decode(obj: dict) -> Any:
    if b"__ndarray__" in obj:
        return np.frombuffer(obj[b"data"], dtype=np.dtype(obj[b"dtype"])).reshape(obj[b"shape"]).copy()
    if b"__npgeneric__" in obj:
        return np.dtype(obj[b"dtype"]).type(obj[b"data"])
    return obj


def packb(obj: Any) -> bytes:
    return msgpack.packb(obj, default=_encode)


def unpackb(data: bytes) -> Any:
    return msgpack.unpackb(data, object_hook=_decode)
