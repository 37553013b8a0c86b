"""The memory oracle's text: what an oracle-memory policy is told it has done so far.

One builder for the two places that must agree word for word: the evaluation
harness's prompt under ``--memory-oracle`` and the ``memory.so_far.*`` column of
the LeRobot export (a policy trained on the export sees at evaluation exactly
the strings it was trained on).
"""

from __future__ import annotations

from collections.abc import Sequence


def memory_line(done_texts: Sequence[str]) -> str:
    """``"Memory: <texts joined by '; '>."``, or ``"Memory: nothing done yet."`` when none are done.

    ``done_texts`` are the completed checkpoints' texts at one language level, in checkpoint order.
    """
    return f"Memory: {'; '.join(done_texts) if done_texts else 'nothing done yet'}."


def oracle_prompt(instruction: str, done_texts: Sequence[str]) -> str:
    """The prompt an oracle-memory policy receives: the instruction, then the :func:`memory_line`."""
    return f"{instruction}\n{memory_line(done_texts)}"
