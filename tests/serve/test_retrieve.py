"""``POST /retrieve`` and ``/access``, the RL trainers' retriever formats (Search-R1, rLLM, ASearcher), in
process (Starlette's test client over the real sample index): every form and outcome, the hits the engine's
batch gives, errors their retry loops read right (4xx never retried, 503/504 retried)."""

from __future__ import annotations

import asyncio

import pytest
from starlette.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.retrieve import DEFAULT_TOPK, MAX_QUERIES
from serve.retrieval.service import Limits, RetrievalService
from sws.env import chunk_url
from sws.env.hits import SNIPPET_CHARS, make_snippet

QUERIES = ["history of Sudan", "Polish footballer Olisadebe", "who directed Nosferatu"]


@pytest.fixture(scope="module")
def client(engine):
    service = RetrievalService(engine, tool_options={"max_top_k": 20, "max_query_chars": 200})
    with TestClient(make_http_app(service)) as client:
        yield client
    service.close()


def retrieve(client, **body):
    return client.post("/retrieve", json=body)


def expected_docs(engine, queries, k, method="rrf"):
    return [[h.chunk for h in hits] for hits in engine.batch_search(queries, k, method)]


def check_document(doc, chunk, max_chars=SNIPPET_CHARS):
    """The title quoted on the first line (clients split on it), the text cut like a search snippet."""
    assert doc == {
        "id": chunk.chunk_id,
        "contents": f'"{chunk.title}"\n{make_snippet(chunk.text, max_chars)}',
        "url": chunk_url(chunk.page_id, chunk.chunk_index),
    }


def test_a_batch_answers_each_query_in_order_with_the_engines_hits(client, engine):
    response = retrieve(client, queries=QUERIES, topk=4, return_scores=False)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    expected = expected_docs(engine, QUERIES, 4)
    assert [len(docs) for docs in result] == [len(c) for c in expected] and all(result)
    for docs, chunks in zip(result, expected, strict=True):
        for doc, chunk in zip(docs, chunks, strict=True):
            check_document(doc, chunk)


def test_scores_wrap_each_document(client, engine):
    result = retrieve(client, queries=QUERIES[:2], topk=2, return_scores=True, method="keywords").json()[
        "result"
    ]
    hits = engine.batch_search(QUERIES[:2], 2, "keywords")
    assert [[(r["document"]["id"], r["score"]) for r in q] for q in result] == [
        [(h.chunk.chunk_id, pytest.approx(h.score)) for h in q] for q in hits
    ]


def test_the_single_query_form_answers_in_its_own_shape(client, engine):
    data = retrieve(client, query="  history of Sudan ", top_k=2, method="vector").json()
    assert (data["query"], data["method"], data["num_results"]) == ("history of Sudan", "vector", 2)
    (chunks,) = expected_docs(engine, ["history of Sudan"], 2, "vector")
    assert [r["document"]["id"] for r in data["results"]] == [c.chunk_id for c in chunks]
    assert all(isinstance(r["score"], float) for r in data["results"])


def test_defaults_empty_queries_cuts_and_titles(client, engine):
    result = retrieve(client, queries=["history of Sudan"]).json()["result"]
    assert len(result[0]) == DEFAULT_TOPK  # topk missing: Search-R1's default
    assert len(retrieve(client, queries=["history of Sudan"], topk=None).json()["result"][0]) == DEFAULT_TOPK
    assert retrieve(client, queries=[]).json() == {"result": []}
    assert retrieve(client, queries=["   ", "Sudan"], topk=1).json()["result"][0] == []
    (doc,) = retrieve(client, queries=["history of Sudan"], topk=1, max_chars=40).json()["result"][0]
    (chunk,) = expected_docs(engine, ["history of Sudan"], 1)[0]
    check_document(doc, chunk, max_chars=40)
    assert "... (Omitted " in doc["contents"]
    titled = retrieve(client, queries=["Sudan"], topk=2, only_title=True).json()["result"][0]
    assert [d["id"] for d in titled] == [h.chunk.chunk_id for h in engine.search_titles("Sudan", 2)]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"queries": QUERIES, "topk": 0}, "topk"),
        ({"queries": QUERIES, "topk": 21}, "above the bound 20"),
        ({"queries": QUERIES, "topk": "3"}, "topk"),
        ({"queries": QUERIES, "topk": 2.5}, "topk"),
        ({"queries": "history of Sudan"}, "queries"),
        ({"queries": [1, 2]}, "queries.0"),
        ({"queries": QUERIES, "return_scores": "yes"}, "return_scores"),
        ({"queries": QUERIES, "method": "bm25"}, "method"),
        ({"queries": QUERIES, "query": "x"}, "either 'queries'"),
        ({}, "either 'queries'"),
        ({"queries": ["x"] * (MAX_QUERIES + 1)}, "queries"),
        ({"queries": ["x" * 201]}, "queries[0] is too long"),
        ({"query": "x", "topk": 2, "top_k": 3}, "disagree"),
    ],
)
def test_a_body_that_can_never_succeed_is_422(client, body, message):
    response = client.post("/retrieve", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and message in error["message"]


def test_access_opens_chunks_and_articles_and_nulls_the_rest(client, engine):
    (chunk,) = expected_docs(engine, ["history of Sudan"], 1)[0]
    urls = [
        chunk_url(chunk.page_id, chunk.chunk_index),
        f"https://en.wikipedia.org/wiki/{chunk.page_id}",
        "https://en.wikipedia.org/wiki/999999999",
        "not a url",
    ]
    result = client.post("/access", json={"urls": urls}).json()["result"]
    assert result[0]["contents"].startswith(f"# {chunk.title} (chunk {chunk.chunk_index + 1}/")
    assert result[1]["contents"].startswith(f"# {chunk.title} (ID: {chunk.page_id})")
    assert result[2:] == [None, None]
    assert client.post("/access", json={"urls": "x"}).status_code == 422


class _FailingEngine:
    """The sample engine whose batched search and page reads fail (an index gone under it) or take too long."""

    def __init__(self, engine, delay_s=0.0):
        self.engine, self.delay_s = engine, delay_s

    def batch_search(self, *args):
        return self._slow_or_failing(self.engine.batch_search, *args)

    def page_chunks(self, *args):
        return self._slow_or_failing(self.engine.page_chunks, *args)

    def _slow_or_failing(self, method, *args):
        if self.delay_s:
            import time

            time.sleep(self.delay_s)
            return method(*args)
        raise OSError("mmap of the chunks index failed")

    def __getattr__(self, name):
        return getattr(self.engine, name)


def test_backend_failures_are_503_with_retry_after_and_slow_ones_504(engine):
    """Both routes: ``/access`` reads its pages on the pool, within the same deadline."""
    (chunk,) = expected_docs(engine, QUERIES[:1], 1)[0]
    bodies = {"/retrieve": {"queries": QUERIES}, "/access": {"urls": [chunk_url(chunk.page_id, 0)]}}
    broken = RetrievalService(_FailingEngine(engine))
    with TestClient(make_http_app(broken, retry_after_s=2)) as client:
        for path, body in bodies.items():
            response = client.post(path, json=body)
            assert (response.status_code, response.headers["retry-after"]) == (503, "2"), path
            assert "OSError: mmap of the chunks index failed" in response.json()["error"]["message"]
        assert broken.health()["status"] == "failing"
    slow = RetrievalService(_FailingEngine(engine, delay_s=1.0), limits=Limits(request_timeout_s=0.2))
    with TestClient(make_http_app(slow)) as client:
        for path, body in bodies.items():
            response = client.post(path, json=body)
            assert response.status_code == 504 and response.json()["error"]["code"] == "timeout", path
    broken.close()
    slow.close()


class _CountingPrefetcher:
    """A remote query embedder stand-in over the sample's own model: counts the texts it is asked for."""

    def __init__(self, embedder):
        self.embedder, self.query_task, self.texts = embedder, embedder.query_task, []

    async def aembed(self, text):
        self.texts.append(text)
        await asyncio.sleep(0)
        return self.embedder.embed_documents([text])[0]

    async def aembed_batch(self, texts):
        self.texts.extend(texts)
        await asyncio.sleep(0)
        return self.embedder.embed_documents(texts)


def test_with_a_prefetcher_the_engine_embeds_nothing_and_answers_the_same(engine, client):
    prefetch = _CountingPrefetcher(engine.index.embedder)
    service = RetrievalService(engine, tool_options={"max_top_k": 20}, prefetch=prefetch)
    with TestClient(make_http_app(service)) as prefetched:
        got = retrieve(prefetched, queries=QUERIES, topk=3).json()
    assert len(prefetch.texts) == len(QUERIES)
    assert [[d["id"] for d in q] for q in got["result"]] == [
        [d["id"] for d in q] for q in retrieve(client, queries=QUERIES, topk=3).json()["result"]
    ]
    service.close()
