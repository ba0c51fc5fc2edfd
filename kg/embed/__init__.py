"""Paper embeddings without a neural network at run time: a static embedder distilled from all-MiniLM-L6-v2.

``scripts/distill_embedder.py`` runs MiniLM once over its vocabulary (model2vec's recipe: each WordPiece token's
contextual vector, reduced by PCA and weighed by how rare the token is in arXiv abstracts) and writes
``kg/embed/model/``. Embedding a paper is then a tokenizer call and a mean of rows: numpy and the Rust
``tokenizers`` package, about 2,000 abstracts a second on one core, and the same vector on every machine.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

MODEL_DIR = Path(__file__).resolve().parent / "model"
# Text beyond this many tokens adds little to an abstract's mean and costs time (a few abstracts are pasted
# papers); the same cut at build and query time.
MAX_TOKENS = 1024
BATCH = 256


class StaticEmbedder:
    """Title + abstract -> a unit vector of ``dims`` float32."""

    def __init__(self, model_dir: Path, *, centred: bool = True) -> None:
        from tokenizers import Tokenizer

        self.meta = json.loads((model_dir / "meta.json").read_text())
        self.vectors = np.load(model_dir / "vectors.npy").astype(np.float32)
        self.dims = int(self.vectors.shape[1])
        self.center = np.load(model_dir / "center.npy").astype(np.float32) if centred else None
        # Names the model's weights: embeddings stored by another model are never mixed with this one's.
        digest = hashlib.blake2b((model_dir / "vectors.npy").read_bytes(), digest_size=6).hexdigest()
        self.name = f"{self.meta['name']}-{self.dims}-{digest}"
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()  # one tokenizer call at a time: server threads share this embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text (a zero row for a text without tokens)."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for s in range(0, len(texts), BATCH):
            # A lone surrogate (text decoded with surrogateescape, a JSON "\ud800") is no Unicode text: '?'.
            batch = [t.encode("utf-8", "replace").decode("utf-8") for t in texts[s : s + BATCH]]
            with self._lock:
                encs = self._tok.encode_batch(batch, add_special_tokens=False)
            for i, enc in enumerate(encs, start=s):
                if enc.ids:
                    out[i] = self.vectors[enc.ids].mean(axis=0)
        out = _unit(out)
        if self.center is not None:
            out = _unit(np.where(out.any(axis=1, keepdims=True), out - self.center, 0.0).astype(np.float32))
        return out


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def paper_text(title: str | None, abstract: str) -> str:
    """What a paper's embedding is made of: its title (when it has one) and abstract."""
    return f"{title}. {abstract}" if title else abstract


@lru_cache(maxsize=1)
def default_embedder() -> StaticEmbedder:
    return StaticEmbedder(MODEL_DIR)
