"""The hashing embedder of the scale benchmarks: deterministic, word-based, normalised, rebuilt from its spec."""

from __future__ import annotations

import numpy as np
import pytest

from sws.index import make_embedder
from sws.index.embedders import HashingEmbedder


def test_same_words_same_vector_and_unit_norm():
    e = HashingEmbedder(dim=64)
    v = e.embed_documents(["The cat, the HAT!", "the cat the hat", "a dog", "İstanbul straße"])
    assert v.shape == (4, 64) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(v[0], v[1])  # case and punctuation are not words
    assert v[0] @ v[2] < 0.99 and np.abs(v[3]).sum() > 0


def test_batches_split_by_size_give_the_rows_of_single_calls():
    e = HashingEmbedder()
    long = [f"word{i} " * 150_000 for i in range(4)]  # 4 x 0.9 MB: several numpy passes of 2 MB
    texts = [*long, "tail text"]
    np.testing.assert_array_equal(
        e.embed_documents(texts), np.vstack([e.embed_documents([t]) for t in texts])
    )


def test_spec_round_trip_keeps_the_space():
    e = HashingEmbedder(dim=128)
    again = make_embedder(**e.spec())
    assert isinstance(again, HashingEmbedder) and again.fingerprint == e.fingerprint
    np.testing.assert_array_equal(again.embed_queries(["x y"]), e.embed_queries(["x y"]))
    assert HashingEmbedder(dim=256).fingerprint != e.fingerprint


def test_bad_dim_is_refused():
    with pytest.raises(ValueError, match="dim must be >= 1"):
        HashingEmbedder(dim=0)
