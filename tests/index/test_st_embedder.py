"""The packaged MiniLM: offline load, unit vectors, and semantic behaviour."""

import numpy as np

from sws.index.embedders import MINILM, make_embedder, packaged_minilm_dir

DOCS = [
    "Albert Einstein developed the theory of relativity, one of the two pillars of modern physics.",
    "The banana is an elongated, edible fruit produced by several kinds of large herbaceous flowering plants.",
    "Bitcoin is the first decentralized cryptocurrency, based on a peer-to-peer network.",
]


def test_packaged_model_is_found():
    assert (packaged_minilm_dir() / "model.safetensors").is_file()


def test_unit_vectors_and_spec_round_trip(embedder):
    vectors = embedder.embed_documents(DOCS)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)
    assert embedder.model == MINILM and embedder.query_task == "" and embedder.max_length == 256
    assert embedder.spec() == {
        "kind": "sentence-transformers",
        "model": MINILM,
        "query_task": "",
        "max_length": 256,
    }
    assert make_embedder(**embedder.spec(), device="cpu").fingerprint == embedder.fingerprint


def test_queries_find_their_documents(embedder):
    queries = ["who came up with relativity?", "yellow tropical fruit", "digital currency without a bank"]
    similarity = embedder.embed_queries(queries) @ embedder.embed_documents(DOCS).T
    assert similarity.argmax(axis=1).tolist() == [0, 1, 2]
    assert (np.diag(similarity) > 0.3).all() and (similarity - np.diag(np.diag(similarity)) < 0.2).all()


def test_queries_are_stripped_without_instruction(embedder):
    np.testing.assert_allclose(
        embedder.embed_queries(["  yellow fruit \n"]), embedder.embed_documents(["yellow fruit"]), atol=1e-6
    )
