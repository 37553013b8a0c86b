"""The memory-alignment losses, with the paper's names (torch).

Each takes a policy's vectors already projected into the text embedding's space
(the policy's ``align`` head does that) and the text embeddings they should match:

- :func:`semantic_loss`: 1 - cosine between projected ``m_t`` and the embedding of the memory text at ``t``;
- :func:`contrastive_loss`: bidirectional InfoNCE over a batch of (``m_t``, text) pairs at a temperature;
  pairs that share a text count as one class (the text side is deduplicated), so two frames under
  the same checkpoint are never pushed apart;
- :func:`framewise_loss`: 1 - cosine between each history frame's own feature (before the memory
  module) and the text of the checkpoint active at that frame.

Every loss averages over the valid entries of ``mask`` (True = counts) and is 0 when none is valid.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

ALIGN_LOSSES = ("none", "semantic", "contrastive", "framewise")


def _masked_mean(values: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if mask is None:
        return values.mean()
    weights = mask.to(values.dtype)
    return (values * weights).sum() / weights.sum().clamp_min(1.0)


def cosine_distance(vectors: torch.Tensor, texts: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean of ``1 - cos(vectors[i], texts[i])`` over the last dimension, where ``mask`` is True."""
    return _masked_mean(1.0 - F.cosine_similarity(vectors, texts, dim=-1, eps=1e-8), mask)


def semantic_loss(memory: torch.Tensor, texts: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Semantic alignment: ``memory`` [..., d] (projected m_t) against ``texts`` [..., d] (memory text at t)."""
    return cosine_distance(memory, texts, mask)


def framewise_loss(frames: torch.Tensor, texts: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Framewise alignment: each frame's projected feature [..., d] against its active checkpoint's text."""
    return cosine_distance(frames, texts, mask)


def contrastive_loss(
    memory: torch.Tensor, texts: torch.Tensor, text_ids: torch.Tensor, temperature: float = 0.1
) -> torch.Tensor:
    """Contrastive alignment: bidirectional InfoNCE of N pairs ``memory`` [N, d], ``texts`` [N, d].

    ``text_ids`` [N] names each pair's text; equal ids are one class. Memory to text: each m_i
    classifies among the batch's distinct texts. Text to memory: each distinct text picks its
    pairs among all N (-log of the probability mass on them). The result is the mean of the two.
    With N distinct texts this is the CLIP loss. Fewer than 2 distinct texts: 0 (nothing to contrast).
    """
    if memory.shape[0] == 0:
        return memory.sum() * 0.0
    unique, inverse = torch.unique(text_ids, return_inverse=True)
    if len(unique) < 2:
        return memory.sum() * 0.0 + texts.sum() * 0.0
    positive = inverse[None, :] == torch.arange(len(unique), device=text_ids.device)[:, None]  # [U, N]
    first = positive.int().argmax(dim=1)  # each distinct text's first pair stands for it
    logits = F.normalize(memory, dim=-1) @ F.normalize(texts[first], dim=-1).T / temperature  # [N, U]
    memory_to_text = F.cross_entropy(logits, inverse)
    columns = logits.T  # [U, N]
    text_to_memory = (
        torch.logsumexp(columns, dim=1) - torch.logsumexp(columns.masked_fill(~positive, float("-inf")), dim=1)
    ).mean()
    return 0.5 * (memory_to_text + text_to_memory)
