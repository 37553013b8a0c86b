"""One run at a time per run folder: an advisory lock held while a run writes the folder.

Two runs resuming one folder would each run every missing episode and both
append them to the ledger. :func:`run_folder_lock` takes an exclusive
``flock`` on ``<folder>/run.lock`` without waiting: a second run gets
:class:`RunFolderLocked` (a one-line error) instead. The lock is advisory
(readers such as ``memobench report`` ignore it) and the kernel drops it when
the holder dies, however it dies, so a killed run never leaves the folder
locked. The lock file holds the holder's pid for the message and is removed
on release.

This is a separate file, not the ledger's own ``flock``: the ledger takes
short exclusive and shared locks on its descriptor around each repair and
append (:mod:`memobench.evaluation.ledger`), which a run-long exclusive lock on
the same file would block.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from memobench.evaluation.regular_files import NotARegularFile, open_regular
from memobench.evaluation.run_folder import RunFolderError

LOCK_FILENAME = "run.lock"


class RunFolderLocked(RunFolderError):
    """Another run holds the folder's lock."""


@contextlib.contextmanager
def run_folder_lock(out_root: Path) -> Iterator[Path]:
    """Hold ``out_root``'s run lock for the block (creating the folder); yields the lock file's path.

    Raises :class:`RunFolderLocked` if another process holds it, and
    :class:`~memobench.evaluation.run_folder.RunFolderError` if the folder
    cannot be created or written (a file in the way, no permission).
    """
    path = out_root / LOCK_FILENAME
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        fd = _acquire(path)
    except OSError as e:
        raise RunFolderError(
            f"--out-root {out_root}: cannot use it as a run folder ({e.strerror or type(e).__name__})"
        ) from None
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # while still holding it: see _acquire
        os.close(fd)


def _acquire(path: Path) -> int:
    """An open descriptor holding the exclusive lock on ``path``.

    The holder removes the file when done, so a process may lock a file that
    was just unlinked; it then checks that the file it locked is still the one
    at ``path`` and otherwise tries again on the new one.
    """
    while True:
        fd = _open_regular(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunFolderLocked(
                f"{path.parent} is in use by another run (pid {holder}, holding {path.name}); wait for it to "
                "finish, or choose another --out-root"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.lstat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


def _open_regular(path: Path) -> int:
    """``path`` opened read-write (created if missing), refusing anything but a regular file: a
    symlink is not followed (the run would write its pid into the link's target, anywhere), a
    FIFO or device not opened for use. Raises :class:`RunFolderError` naming the file."""
    try:
        return open_regular(path, os.O_RDWR | os.O_CREAT)
    except NotARegularFile as e:
        raise RunFolderError(str(e)) from None
