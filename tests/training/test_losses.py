"""The alignment losses against hand-computed values, and their gradients (gradcheck, float64)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from memobench.training.losses import contrastive_loss, framewise_loss, semantic_loss  # noqa: E402

D = torch.float64


def test_semantic_is_one_minus_cosine_averaged_over_the_mask() -> None:
    memory = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 3.0]], dtype=D)
    texts = torch.tensor([[2.0, 0.0], [1.0, 0.0], [0.0, -1.0]], dtype=D)
    # cosines: 1, 1/sqrt(2), -1  ->  distances 0, 1 - 1/sqrt(2), 2
    assert semantic_loss(memory, texts).item() == pytest.approx((0 + 1 - 1 / math.sqrt(2) + 2) / 3)
    mask = torch.tensor([True, True, False])
    assert semantic_loss(memory, texts, mask).item() == pytest.approx((1 - 1 / math.sqrt(2)) / 2)
    assert semantic_loss(memory, texts, torch.zeros(3, dtype=torch.bool)).item() == 0.0


def test_framewise_scores_every_frame_of_a_batch_of_sequences() -> None:
    frames = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [5.0, 5.0]]], dtype=D)  # [B=2, T=2, 2]
    texts = torch.tensor([[[0.0, 1.0], [0.0, 1.0]], [[-1.0, 0.0], [1.0, 1.0]]], dtype=D)
    mask = torch.tensor([[True, True], [True, False]])  # the last frame is padding
    # distances: 1, 0, 2, (0 masked)
    assert framewise_loss(frames, texts, mask).item() == pytest.approx(1.0)


def test_contrastive_equals_the_clip_loss_written_out_for_two_pairs() -> None:
    memory = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=D)
    texts = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=D)
    tau = 0.5
    c = 1 / math.sqrt(2)
    logits = [[1 / tau, c / tau], [0.0, c / tau]]  # rows: memory i, columns: text j

    def nll(row, k):
        return -row[k] + math.log(sum(math.exp(v) for v in row))

    rows = (nll(logits[0], 0) + nll(logits[1], 1)) / 2
    cols = [[logits[0][0], logits[1][0]], [logits[0][1], logits[1][1]]]
    columns = (nll(cols[0], 0) + nll(cols[1], 1)) / 2
    got = contrastive_loss(memory, texts, torch.tensor([0, 1]), temperature=tau)
    assert got.item() == pytest.approx((rows + columns) / 2)


def test_contrastive_counts_pairs_sharing_a_text_as_one_class() -> None:
    memory = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=D)
    texts = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=D)
    ids = torch.tensor([7, 7, 3])
    tau = 1.0
    # memory -> text: 2 distinct texts; each memory's own text has logit 1, the other 0
    m2t = -math.log(math.e / (math.e + 1))
    # text -> memory: text 7's positives are memories 0 and 1 (logits 1, 1, 0): -log(2e / (2e + 1));
    # text 3's positive is memory 2 (logits 0, 0, 1): -log(e / (e + 2))
    t2m = (-math.log(2 * math.e / (2 * math.e + 1)) - math.log(math.e / (math.e + 2))) / 2
    assert contrastive_loss(memory, texts, ids, tau).item() == pytest.approx((m2t + t2m) / 2)


def test_contrastive_with_one_text_has_nothing_to_contrast() -> None:
    memory = torch.randn(4, 3, dtype=D, requires_grad=True)
    loss = contrastive_loss(memory, torch.randn(4, 3, dtype=D), torch.zeros(4, dtype=torch.long))
    assert loss.item() == 0.0
    loss.backward()  # still part of the graph
    assert memory.grad is not None and torch.all(memory.grad == 0)


def test_contrastive_falls_as_memory_matches_its_texts() -> None:
    texts = torch.eye(4, dtype=D)
    ids = torch.arange(4)
    aligned = contrastive_loss(texts * 3, texts, ids, 0.1)
    shuffled = contrastive_loss(texts[[1, 2, 3, 0]] * 3, texts, ids, 0.1)
    assert aligned.item() < 1e-3 < shuffled.item()


@pytest.mark.parametrize("name", ["semantic", "framewise", "contrastive"])
def test_gradients_match_finite_differences(name: str) -> None:
    torch.manual_seed(0)
    memory = torch.randn(5, 4, dtype=D, requires_grad=True)
    texts = torch.randn(5, 4, dtype=D, requires_grad=True)
    mask = torch.tensor([True, True, False, True, True])
    ids = torch.tensor([0, 1, 1, 2, 3])
    functions = {
        "semantic": lambda m, t: semantic_loss(m, t, mask),
        "framewise": lambda m, t: framewise_loss(m[None], t[None], mask[None]),
        "contrastive": lambda m, t: contrastive_loss(m, t, ids, 0.3),
    }
    assert torch.autograd.gradcheck(functions[name], (memory, texts))
