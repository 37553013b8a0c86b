"""Opening the files of a run folder, which is untrusted input: regular files only.

A run folder may come from anyone (a shared results folder, a tampered download). A symlink
in it must not make a run write or read outside the folder (``run.lock`` -> any file: the
pid written over it), and a FIFO or device must not hang or flood a reader. Every file the
run machinery opens inside a run folder is opened here: never through a symlink
(``O_NOFOLLOW``), never blocking on open (``O_NONBLOCK``), and refused unless ``fstat``
says it is a regular file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

METADATA_LIMIT = 16 * 1024 * 1024  # bytes: a run.json or config.json is kilobytes; /dev/zero is endless


class NotARegularFile(ValueError):
    """The path is a symlink, FIFO, device, socket or folder."""


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags, mode)`` for a regular file only; returns the descriptor (close it).

    Raises :class:`NotARegularFile` naming the path for anything else, FileNotFoundError when
    it is missing (without ``O_CREAT``), and OSError for the rest.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotARegularFile(f"{path} is not a regular file (a symlink); remove it") from None
        if e.errno in (errno.ENXIO, errno.EISDIR):
            raise NotARegularFile(f"{path} is not a regular file; remove it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotARegularFile(f"{path} is not a regular file; remove it")
    os.set_blocking(fd, True)  # a regular file: ordinary reads and writes from here on
    return fd


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (:func:`open_regular`); with ``limit``, a file larger than
    ``limit`` bytes is refused (:class:`NotARegularFile` is not the error then: ValueError)."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise ValueError(f"{path} is {size} bytes, more than the {limit} a file of its kind may hold")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_json_file(path: Path, limit: int = METADATA_LIMIT) -> Any:
    """The JSON value in regular file ``path`` of at most ``limit`` bytes (:func:`read_regular`).
    Raises ValueError (not a regular file, too large, not UTF-8 JSON) or OSError."""
    return json.loads(read_regular(path, limit).decode("utf-8"))
