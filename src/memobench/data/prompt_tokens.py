"""How long a prompt is in a VLA's tokens: an estimate, with no tokenizer at hand.

pi0 and pi0.5 (openpi) tokenize the prompt with PaliGemma's SentencePiece model (Gemma's
vocabulary of about 256k pieces) and cut it at ``max_token_len``: 48 tokens for pi0, 200 for
pi0.5. A cut prompt loses its end, which under ``--memory-oracle`` is the memory line. The
tokenizer's model is not here (openpi downloads it), so this counts what such a vocabulary
does to plain English, and says it is an estimate:

- a word (a run of letters) is one piece, and one more for every 8 letters past its first 8
  (a large vocabulary holds common words whole, but splits long or rare ones);
- every digit is a piece (Gemma's tokenizer splits numbers into digits);
- every other visible character (punctuation) is a piece;
- plus the pieces openpi adds around pi0's prompt: the beginning-of-sequence token and the
  separator (``"\\n"``) after it (:data:`PI0_FRAMING`).

pi0.5 also writes the robot state, discretised, into the same 200 tokens; that part is not
counted here (:func:`budget_report` says so).
"""

from __future__ import annotations

import re

PI0_MAX_TOKENS = 48
PI05_MAX_TOKENS = 200
PI0_FRAMING = 2  # BOS before the prompt and the encoded "\n" after it (openpi's PaligemmaTokenizer)
_PIECES = re.compile(r"[^\W\d_]+|\d|[^\w\s]|_")
WORD_PIECE = 8  # letters a piece of a long word is taken to hold


def estimate_tokens(prompt: str) -> int:
    """Estimated PaliGemma tokens of ``prompt`` as openpi's pi0 tokenizes it (module docstring), framing included."""
    # openpi cleans the prompt first: underscores and newlines become spaces
    text = prompt.strip().replace("_", " ").replace("\n", " ")
    count = 0
    for piece in _PIECES.findall(text):
        count += 1 + (len(piece) - 1) // WORD_PIECE if piece.isalpha() else 1
    return count + PI0_FRAMING


def budget_report(prompts_by_task: dict[str, set[str]]) -> list[dict[str, object]]:
    """Per task: its prompts' count, the longest one's estimated tokens, and whether it fits pi0's 48 and pi0.5's 200.

    ``fits_pi05`` compares the prompt alone with 200: pi0.5 puts the discretised state into the
    same budget, so a prompt near 200 overflows sooner than this says.
    """
    rows = []
    for task, prompts in sorted(prompts_by_task.items()):
        longest = max(prompts, key=estimate_tokens)
        tokens = estimate_tokens(longest)
        rows.append(
            {
                "task": task,
                "prompts": len(prompts),
                "max_tokens_estimate": tokens,
                "fits_pi0": tokens <= PI0_MAX_TOKENS,
                "fits_pi05": tokens <= PI05_MAX_TOKENS,
                "longest": longest,
            }
        )
    return rows
