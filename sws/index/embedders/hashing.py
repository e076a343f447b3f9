"""A fast deterministic bag-of-words embedder for scale runs only (``benchmarks/scale_index.py``).

Embedding a million 1536-token chunks with a neural model is out of reach on a few CPU cores, yet the index
path, shards, memory-mapping and search code are what a scale run measures. This embedder gives them real
vectors at tens of MB of text per second and core: every lower-cased word (a run of ASCII letters and
digits or non-ASCII bytes) is hashed, from its length and its first and last 8 bytes, into one of ``dim``
buckets with a sign (the feature-hashing trick), each bucket's signed count becomes
``sign(x) * log1p(|x|)`` (so frequent words do not dominate) and the row is L2-normalised. Same text, same vector, on every machine. It knows nothing of meaning: its results are not
relevance figures, and its vectors are only as easy for HNSW as the corpus makes them (the scale benchmark
measures its recall@10 against exact search on the same vectors).
"""

from __future__ import annotations

import numpy as np

from sws.index.embedders.base import Embedder

_ALL = np.uint64(2**64 - 1)
_BATCH_BYTES = 1 << 21  # text bytes hashed per numpy pass (bounds the temporary arrays to ~30 MB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit affects every output bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _word_bytes(data: np.ndarray) -> np.ndarray:
    """True where a byte belongs to a word: ASCII letters and digits (text is lower-cased) or non-ASCII."""
    return ((data >= 48) & (data <= 57)) | ((data >= 97) & (data <= 122)) | (data >= 128)


class HashingEmbedder(Embedder):
    """Signed feature hashing of words into ``dim`` buckets. Scale benchmarks only: not a relevance model.

    Args:
        model: the name of the space (its model id is part of the fingerprint).
        dim: vector dimension.
        query_task: see ``Embedder`` (none by default).
    """

    kind = "hashing"

    def __init__(self, model: str = "sws-hashing", dim: int = 384, query_task: str | None = ""):
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        super().__init__(model, query_task)
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def spec(self) -> dict:
        return super().spec() | {"dim": self._dim}

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), np.float32)
        start, size = 0, 0
        for i, text in enumerate(texts):
            size += len(text) + 1
            if size >= _BATCH_BYTES or i == len(texts) - 1:
                out[start : i + 1] = self._embed_batch(texts[start : i + 1])
                start, size = i + 1, 0
        return np.sign(out) * np.log1p(np.abs(out))

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Signed bucket counts of the words of ``texts`` (joined by a non-word byte)."""
        blobs = [text.lower().encode() for text in texts]
        data = np.frombuffer(b"\n".join(blobs) + bytes(8), np.uint8)
        edges = np.diff(_word_bytes(data).astype(np.int8), prepend=np.int8(0))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        # each word's first and last 8 bytes as little-endian integers (an unaligned uint64 view per offset)
        at = np.ndarray((len(data) - 7,), "<u8", data, strides=(1,))
        length = (ends - starts).astype(np.uint64)
        short = np.minimum(length, np.uint64(7)) * np.uint64(8)
        head = at[starts] & np.where(length >= 8, _ALL, (np.uint64(1) << short) - np.uint64(1))
        tail = np.where(length > 8, at[np.maximum(ends - 8, 0)], np.uint64(0))
        words = _mix(_mix(head ^ length) ^ tail)
        bucket = (words % np.uint64(self._dim)).astype(np.int64)
        sign = np.where(words & np.uint64(1 << 40), 1.0, -1.0)
        doc = np.searchsorted(np.cumsum([len(b) + 1 for b in blobs]), starts, side="right")
        counts = np.bincount(doc * self._dim + bucket, weights=sign, minlength=len(texts) * self._dim)
        return counts.reshape(len(texts), self._dim)
