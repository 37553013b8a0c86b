"""The episode ledger: ``ledger.jsonl``, one :class:`EpisodeRecord` JSON line per finished episode.

The ledger is append-only and the single source of truth for every metric.
Crash safety rests on two facts:

- each record is written with ONE ``os.write`` of ``line + "\\n"`` on a
  descriptor opened with ``O_APPEND``, then fsynced, so concurrent writers
  (processes on one local filesystem) never interleave their lines;
- a line without its trailing newline can only be the tail of an interrupted
  write (e.g. SIGKILL); opening a :class:`Ledger` truncates that torn tail so a
  resumed run appends cleanly after the last whole record.

Resolution rules, shared by :class:`Ledger` and :func:`read_ledger`: a complete
line that is not a valid record raises :class:`LedgerError` naming the file
and line; a repeated ``(task_id, episode)`` keeps the first record and warns;
a blank line is skipped with a warning.
"""

from __future__ import annotations

import fcntl
import os
import warnings
from pathlib import Path
from types import TracebackType

from pydantic import ValidationError

from memobench.core.records import EpisodeRecord
from memobench.evaluation.regular_files import NotARegularFile, open_regular, read_regular

LEDGER_FILENAME = "ledger.jsonl"

Key = tuple[str, int]  # (task_id, episode)


class LedgerError(ValueError):
    """The ledger file holds something that is not a valid record, or a write failed."""


class LedgerWarning(UserWarning):
    """A recoverable ledger problem (torn last line, duplicate key) seen by :func:`read_ledger`."""


class _LineParser:
    """Incremental parser: consumes complete lines, keeps first record per key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes of complete lines consumed so far
        self.line_no = 0  # complete lines consumed so far
        self.records: list[EpisodeRecord] = []
        self.first_line: dict[Key, int] = {}  # key -> line number of the kept record
        self.warnings: list[str] = []

    def feed(self, data: bytes) -> int:
        """Parse the complete lines of ``data`` (the file from ``self.offset`` on).

        Returns the length of the trailing partial line (0 if ``data`` ends with
        a newline or is empty); those bytes are not consumed.
        Raises LedgerError on an invalid complete line.
        """
        end = data.rfind(b"\n") + 1  # 0 when there is no complete line
        for raw in data[:end].split(b"\n")[:-1]:
            self.line_no += 1
            self._parse(raw)
        self.offset += end
        return len(data) - end

    def _parse(self, raw: bytes) -> None:
        where = f"{self.path}:{self.line_no}"
        if not raw.strip():
            self.warnings.append(f"{where}: blank line skipped")
            return
        try:
            record = EpisodeRecord.from_json_line(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise LedgerError(f"{where}: ledger line is not UTF-8 ({exc})") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(part) for part in first["loc"]) or "<line>"
            raise LedgerError(
                f"{where}: not a valid episode record ({exc.error_count()} error(s); first at {loc}: {first['msg']})"
            ) from exc
        key = (record.task_id, record.episode)
        kept = self.first_line.get(key)
        if kept is not None:
            self.warnings.append(
                f"{where}: duplicate record for task {key[0]!r} episode {key[1]} ignored; keeping line {kept}"
            )
            return
        self.first_line[key] = self.line_no
        self.records.append(record)


def _read_from(fd: int, offset: int) -> bytes:
    """Everything in the file behind ``fd`` from ``offset`` to its current end."""
    chunks = []
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class Ledger:
    """Read-append handle on a ledger file (created, with its folder, if missing).

    Opening validates every complete line (LedgerError naming file and line on
    an invalid one) and truncates a torn last line away, reporting it in
    :attr:`warnings`. Open the ledger before starting concurrent writers: the
    truncation assumes no write is in flight (an exclusive ``flock`` against
    other :class:`Ledger` handles enforces that between processes).

    :meth:`records` and :meth:`done_keys` re-read lines appended since the last
    call, by this handle or any other writer. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._parser = _LineParser(self.path)
        #: Human-readable notes on recovered problems (torn line, duplicates, blank lines).
        self.warnings: list[str] = self._parser.warnings
        try:  # never through a symlink (records appended, a torn tail truncated, outside the folder)
            self._fd: int | None = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        except NotARegularFile as e:
            raise LedgerError(str(e)) from None
        try:
            self._load_and_repair()
        except BaseException:
            self.close()
            raise

    def _load_and_repair(self) -> None:
        fd = self._require_fd()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            torn = self._parser.feed(_read_from(fd, 0))
            if torn:
                # Only an interrupted write leaves a line without "\n"; drop it so
                # the next record starts on a line of its own.
                os.ftruncate(fd, self._parser.offset)
                os.fsync(fd)
                self.warnings.append(
                    f"{self.path}:{self._parser.line_no + 1}: truncated a torn last line "
                    f"({torn} bytes without a trailing newline, left by an interrupted write)"
                )
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _require_fd(self) -> int:
        if self._fd is None:
            raise LedgerError(f"ledger {self.path} is closed")
        return self._fd

    def append(self, record: EpisodeRecord) -> None:
        """Append ``record`` as one line with a single ``O_APPEND`` write, then fsync.

        A record whose key is already in the ledger is still written (the file
        is append-only) and is ignored with a warning when read back.
        Raises LedgerError on a short write or a closed ledger; OSError passes through.
        """
        fd = self._require_fd()
        data = (record.to_json_line() + "\n").encode("utf-8")
        self._check_same_file(fd, record)
        # Shared lock: appends may run together, but never while an opening
        # handle (exclusive lock) is truncating a torn tail.
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            written = os.write(fd, data)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        if written != len(data):
            raise LedgerError(
                f"{self.path}: short write ({written} of {len(data)} bytes) for task "
                f"{record.task_id!r} episode {record.episode}; the torn line is dropped on reopen"
            )

    def _check_same_file(self, fd: int, record: EpisodeRecord) -> None:
        """Refuse to append once :attr:`path` no longer names the open file.

        A tool that rewrites the file (a ``git checkout`` or merge touching a committed run
        folder, a copy over it, an editor) replaces it with a new one; every record appended
        to the old one afterwards would be lost with it, silently.
        """
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            now = None
        opened = os.fstat(fd)
        if now is None or (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            raise LedgerError(
                f"{self.path} was {'deleted' if now is None else 'replaced by another file'} while this run "
                f"appended to it (by a git checkout or merge, a copy or an editor?); the record of task "
                f"{record.task_id!r} episode {record.episode} was not written. Stop whatever rewrites the "
                "run folder and resume the run: the episodes in the file are kept, the others run again"
            )

    def _refresh(self) -> None:
        fd = self._require_fd()
        size = os.fstat(fd).st_size
        if size < self._parser.offset:
            raise LedgerError(
                f"{self.path}: file shrank from {self._parser.offset} to {size} bytes while "
                "open; the ledger is append-only"
            )
        if size > self._parser.offset:
            # A partial tail here may be another writer mid-write: leave it for later.
            self._parser.feed(_read_from(fd, self._parser.offset))

    def records(self) -> list[EpisodeRecord]:
        """All records in file order, first one per (task_id, episode)."""
        self._refresh()
        return list(self._parser.records)

    def done_keys(self) -> set[Key]:
        """The ``(task_id, episode)`` pairs already recorded."""
        self._refresh()
        return set(self._parser.first_line)

    def close(self) -> None:
        """Close the file; idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_ledger(path: str | os.PathLike[str]) -> list[EpisodeRecord]:
    """Records of the ledger at ``path`` without modifying it.

    A torn last line is skipped; it and any duplicate keys are reported as
    :class:`LedgerWarning`. Raises LedgerError on an invalid complete line and
    FileNotFoundError when ``path`` does not exist.
    """
    path = Path(path)
    parser = _LineParser(path)
    try:
        data = read_regular(path)
    except NotARegularFile as e:
        raise LedgerError(str(e)) from None
    torn = parser.feed(data)
    if torn:
        parser.warnings.append(
            f"{path}:{parser.line_no + 1}: skipped a torn last line ({torn} bytes without a trailing newline)"
        )
    for message in parser.warnings:
        warnings.warn(message, LedgerWarning, stacklevel=2)
    return parser.records
