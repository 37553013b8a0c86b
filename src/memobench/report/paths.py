"""The report's path guard: every file a report writes lies inside its output folder.

Parts of the paths come from the run folders (task ids from the ledgers, video
names), which are untrusted input: a task id of ``../../x`` or ``/tmp/x``
joined into a figure path would write outside ``--out``. Every writer in
:mod:`memobench.report.build` asks :func:`inside` for its target, which
resolves the final path (symlinks and ``..`` included) and refuses one that
leaves the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from memobench.report.runs import ReportError


def inside(out: str | os.PathLike[str], *parts: str | os.PathLike[str]) -> Path:
    """``out / parts...``, checked: raises :class:`ReportError` if the resolved path is not in ``out``.

    The returned path is the unresolved join (so messages and relative links stay as the
    caller built them); the check uses the resolved one. ``out`` itself need not exist yet.
    """
    out = Path(out)
    target = out.joinpath(*parts)
    root = out.resolve()
    resolved = target.resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise ReportError(f"refusing to write {target}: it resolves to {resolved}, outside the report folder {root}")
    return target
