"""Searchers of one shape (``sws.search.searcher``): ``batch_search`` gives each query's ``search`` hits, with
one embedding forward pass and one FAISS call per shard for the batch; embedded queries search alike."""

from __future__ import annotations

import numpy as np
import pytest

from tests.search.test_engine import QUERIES, ids


class _RecordingShard:
    """A FAISS shard that records the shape of every query matrix it is given."""

    def __init__(self, index, calls):
        self._index, self._calls = index, calls
        self.ntotal = index.ntotal

    def search(self, queries, k, params=None):
        self._calls.append(queries.shape)
        return self._index.search(queries, k, params=params)


@pytest.fixture
def recorded(engine, monkeypatch):
    """The engine, with its embedding batches and FAISS calls recorded."""
    dense, calls = engine.index.dense, {"embedded": [], "faiss": []}
    monkeypatch.setattr(
        dense, "_shards", [(start, _RecordingShard(i, calls["faiss"])) for start, i in dense._shards]
    )
    searcher, embed = engine.searchers["vector"], engine.searchers["vector"].embed
    monkeypatch.setattr(
        searcher, "embed", lambda queries: calls["embedded"].append(list(queries)) or embed(queries)
    )
    return calls


def ranked(hits):
    return [(h.chunk.chunk_id, h.source, h.text_rank, h.vector_rank) for h in hits]


@pytest.mark.parametrize("method", ["keywords", "vector", "rrf"])
def test_a_batch_gives_each_querys_hits(engine, method):
    """The same ranking; a batch's forward pass pads its inputs, so a score may differ in its last bits."""
    singles = [engine.search(query, 5, method) for query in QUERIES]
    for batch in (engine.batch_search(QUERIES, 5, method), engine.searchers[method].batch_search(QUERIES, 5)):
        assert [ranked(hits) for hits in batch] == [ranked(hits) for hits in singles]
        scores = [h.score for hits in batch for h in hits]
        assert scores == pytest.approx([h.score for hits in singles for h in hits], rel=1e-5)
    assert all(singles) and engine.batch_search([], 5, method) == []


def test_titles_batch_gives_each_querys_hits(engine):
    queries = ["lobar pneumonia", "Bitcoin", "no such title anywhere"]
    assert engine.titles.batch_search(queries, 3) == [engine.search_titles(q, 3) for q in queries]
    assert ids(engine.titles.search("lobar pneumonia", 5)) == ["1050_0"]


@pytest.mark.parametrize("method", ["vector", "rrf"])
def test_a_batch_is_one_forward_pass_and_one_faiss_call_per_shard(engine, recorded, method):
    engine.batch_search(QUERIES, 5, method)
    shards = len(engine.index.dense.shards)
    assert recorded["embedded"] == [QUERIES]
    assert recorded["faiss"] == [(len(QUERIES), engine.index.dense.dim)] * shards


@pytest.mark.parametrize("method", ["vector", "rrf"])
def test_embedded_queries_give_the_same_hits_and_embed_nothing(engine, embedder, recorded, method):
    vectors = embedder.embed_queries(QUERIES)
    singles = [engine.search(q, 5, method, vector) for q, vector in zip(QUERIES, vectors, strict=True)]
    batch = engine.batch_search(QUERIES, 5, method, vectors)
    assert batch == singles and recorded["embedded"] == []


def test_vectors_of_another_dimension_are_refused(engine):
    dim = engine.index.dense.dim
    with pytest.raises(ValueError, match=rf"expected \(n, {dim}\)"):
        engine.searchers["vector"].search_vector(np.ones(2 * dim, np.float32), 3)
    with pytest.raises(ValueError, match=rf"expected \(n, {dim}\)"):
        engine.batch_search(QUERIES[:2], 3, "rrf", np.ones((2, dim + 1), np.float32))


def test_a_chunk_missing_from_the_keyword_index_is_replaced_by_the_next(engine, monkeypatch):
    """CONTRACT §1.8: a vector candidate that Tantivy does not hold is skipped, the next one taken."""
    full = engine.search("dog breed", 4, "vector")
    lookup = engine.index.keyword.chunks_by_id
    gone = full[0].chunk.chunk_id
    monkeypatch.setattr(
        engine.index.keyword,
        "chunks_by_id",
        lambda wanted: {i: c for i, c in lookup(wanted).items() if i != gone},
    )
    hits = engine.search("dog breed", 4, "vector")
    assert ids(hits)[:3] == ids(full)[1:] and len(hits) == 4 and gone not in ids(hits)
    assert [h.vector_rank for h in hits][:3] == [2, 3, 4]
