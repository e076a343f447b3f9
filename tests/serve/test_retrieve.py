"""``POST /retrieve`` and ``/access``, the RL trainers' retriever formats (Search-R1, rLLM, ASearcher), in
process (Starlette's test client over the real sample index): every form and outcome, the hits the engine's
batch gives, errors their retry loops read right (4xx never retried, 503/504 retried)."""

from __future__ import annotations

import asyncio

import pytest
from starlette.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.retrieve import DEFAULT_TOPK
from serve.retrieval.service import Limits, Overloaded, RetrievalService
from sws.config import RetrieveSettings
from sws.env import chunk_url
from sws.env.hits import make_snippet

QUERIES = ["history of Sudan", "Polish footballer Olisadebe", "who directed Nosferatu"]


SETTINGS = RetrieveSettings(max_queries=40, batch_queries=2, max_answer_chars=40 * 20 * (600 + 256))
MAX_CHARS = SETTINGS.max_chars


@pytest.fixture(scope="module")
def client(engine):
    tools = {"max_top_k": 20, "max_query_chars": 200}
    service = RetrievalService(engine, tool_options=tools, retrieve=SETTINGS)
    with TestClient(make_http_app(service)) as client:
        yield client
    service.close()


def retrieve(client, **body):
    return client.post("/retrieve", json=body)


def expected_docs(engine, queries, k, method="rrf"):
    return [[h.chunk for h in hits] for hits in engine.batch_search(queries, k, method)]


def check_document(doc, chunk, max_chars=MAX_CHARS):
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


def test_the_single_query_form_answers_skyrl_and_rllm_as_their_own_servers_do(client, engine):
    """SkyRL-gym reads ``result`` (one list, scored as asked), rLLM ``results[i]`` ``id`` and
    ``content.contents``."""
    data = retrieve(client, query="  history of Sudan ", topk=2, return_scores=True, method="vector").json()
    (chunks,) = expected_docs(engine, ["history of Sudan"], 2, "vector")
    assert [[hit["document"]["id"] for hit in q] for q in data["result"]] == [[c.chunk_id for c in chunks]]
    assert (data["query"], data["method"], data["num_results"]) == ("history of Sudan", "vector", 2)
    for result, chunk in zip(data["results"], chunks, strict=True):
        assert result["id"] == chunk.chunk_id and isinstance(result["score"], float)
        check_document(result["content"], chunk)
        assert result["document"] == result["content"]
    bare = retrieve(client, query="history of Sudan", top_k=2, method="vector").json()["result"]
    assert [[doc["id"] for doc in q] for q in bare] == [[c.chunk_id for c in chunks]]


def test_defaults_empty_queries_cuts_and_titles(client, engine):
    result = retrieve(client, queries=["history of Sudan"]).json()["result"]
    assert len(result[0]) == DEFAULT_TOPK  # topk missing: Search-R1's default
    assert len(retrieve(client, queries=["history of Sudan"], topk=None).json()["result"][0]) == DEFAULT_TOPK
    assert retrieve(client, queries=[]).json() == {"result": []}
    # an empty query is searched, as the reference servers search it (a dense one finds top-k)
    empty = retrieve(client, queries=["   ", "Sudan"], topk=1).json()["result"][0]
    assert [d["id"] for d in empty] == [c.chunk_id for c in expected_docs(engine, [""], 1)[0]] and empty
    assert retrieve(client, queries=[""], topk=1, method="keywords").json()["result"] == [[]]
    (doc,) = retrieve(client, queries=["history of Sudan"], topk=1, max_chars=40).json()["result"][0]
    (chunk,) = expected_docs(engine, ["history of Sudan"], 1)[0]
    check_document(doc, chunk, max_chars=40)
    assert "... (Omitted " in doc["contents"]
    titled = retrieve(client, queries=["Sudan"], topk=2, only_title=True).json()["result"][0]
    assert [d["id"] for d in titled] == [h.chunk.chunk_id for h in engine.search_titles("Sudan", 2)]


def test_a_batch_larger_than_one_pass_answers_every_query_in_order(client, engine):
    queries = [*QUERIES, "Sudan", "Nosferatu"] * 3  # 15 queries in batches of 2, two at once
    response = retrieve(client, queries=queries, topk=2)
    assert response.status_code == 200 and "errors" not in response.json()
    got = [[d["id"] for d in q] for q in response.json()["result"]]
    assert got == [[c.chunk_id for c in q] for q in expected_docs(engine, queries, 2)]


def test_one_bad_query_costs_only_itself(client, engine):
    queries = [QUERIES[0], "x" * 201, QUERIES[1], None, 7]
    response = retrieve(client, queries=queries, topk=2)
    assert response.status_code == 200 and response.headers["x-sws-query-errors"] == "3"
    data = response.json()
    assert [e["index"] for e in data["errors"]] == [1, 3, 4]
    assert [e["code"] for e in data["errors"]] == ["query_too_long", "invalid_query", "invalid_query"]
    assert "201 characters; at most 200" in data["errors"][0]["message"]
    good = expected_docs(engine, [QUERIES[0], QUERIES[1]], 2)
    assert [[d["id"] for d in q] for q in data["result"]] == [
        [c.chunk_id for c in good[0]],
        [],
        [c.chunk_id for c in good[1]],
        [],
        [],
    ]
    single = retrieve(client, query="x" * 201).json()
    assert (single["result"], single["results"], single["errors"][0]["code"]) == ([[]], [], "query_too_long")


@pytest.mark.parametrize(
    "body, message",
    [
        ({"queries": QUERIES, "topk": 0}, "topk"),
        ({"queries": QUERIES, "topk": 21}, "above the bound 20"),
        ({"queries": QUERIES, "topk": "3"}, "topk"),
        ({"queries": QUERIES, "topk": 2.5}, "topk"),
        ({"queries": "history of Sudan"}, "queries"),
        ({"queries": QUERIES, "return_scores": "yes"}, "return_scores"),
        ({"queries": QUERIES, "method": "bm25"}, "method"),
        ({"queries": QUERIES, "query": "x"}, "either 'queries'"),
        ({}, "either 'queries'"),
        ({"queries": ["x"] * (SETTINGS.max_queries + 1)}, "41 queries in one request; at most 40"),
        ({"queries": ["x"] * 40, "topk": 20, "max_chars": 1000}, "the answer could reach"),
        ({"query": "x", "topk": 2, "top_k": 3}, "disagree"),
    ],
)
def test_a_body_that_can_never_succeed_is_422(client, body, message):
    response = client.post("/retrieve", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and message in error["message"]


def test_the_body_bound_of_batches_follows_the_query_bounds(engine):
    """A rollout batch is far over the other routes' 64 KiB; the bound is ``max_queries`` of the longest."""
    settings, limits = RetrieveSettings(max_queries=8), Limits(max_body_bytes=1024)
    service = RetrievalService(
        engine, tool_options={"max_query_chars": 100}, limits=limits, retrieve=settings
    )
    assert service.batch_body_bytes == 8 * (100 + 16) + 4096
    with TestClient(make_http_app(service)) as http:
        fits = retrieve(http, queries=["Sudan " * 16] * 8, topk=1, method="keywords")
        assert fits.status_code == 200, fits.text
        over = http.post("/retrieve", json={"queries": ["x" * 700] * 8})
        assert over.status_code == 413 and "5024-byte bound" in over.json()["error"]["message"]
        assert http.post("/search", json={"query": "x" * 2000}).status_code == 413  # the others keep theirs
    service.close()


def test_access_opens_whole_articles_in_asearchers_url_forms_and_nulls_the_rest(client, engine):
    (chunk,) = expected_docs(engine, ["history of Sudan"], 1)[0]
    title = chunk.title.replace(" ", "_")
    urls = [
        chunk_url(chunk.page_id, chunk.chunk_index),
        f"https://en.wikipedia.org/wiki/{chunk.page_id}",
        f"https://en.wikipedia.org/w/index.php?title={title}",
        f"https://en.wikipedia.org/index.php/{title}",
        "https://en.wikipedia.org/wiki/999999999",
        "not a url",
    ]
    result = client.post("/access", json={"urls": urls}).json()["result"]
    article = f"# {chunk.title} (ID: {chunk.page_id})"
    assert [r["contents"].split("\n")[0] for r in result[:4]] == [article] * 4
    assert result[0] == result[1] == result[2] == result[3]
    assert result[4:] == [None, None]
    assert client.post("/access", json={"urls": "x"}).status_code == 422
    too_many = client.post("/access", json={"urls": ["x"] * (SETTINGS.max_queries + 1)})
    assert too_many.status_code == 422


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


class _PoisonedEngine:
    """The sample engine, which cannot search one query (``poison``): a batch holding it fails."""

    def __init__(self, engine):
        self.engine = engine

    def batch_search(self, queries, *args):
        if "poison" in queries:
            raise RuntimeError("tantivy: the query could not be parsed")
        return self.engine.batch_search(queries, *args)

    def __getattr__(self, name):
        return getattr(self.engine, name)


def test_a_query_the_index_cannot_search_costs_only_itself(engine):
    service = RetrievalService(_PoisonedEngine(engine), retrieve=RetrieveSettings(batch_queries=3))
    queries = [QUERIES[0], "poison", QUERIES[1], QUERIES[2], "poison"]
    with TestClient(make_http_app(service)) as http:
        data = retrieve(http, queries=queries, topk=1).json()
        assert [e["index"] for e in data["errors"]] == [1, 4]
        assert {e["code"] for e in data["errors"]} == {"search_failed"}
        assert "could not be parsed" in data["errors"][0]["message"]
        expected = expected_docs(engine, [QUERIES[0], QUERIES[1], QUERIES[2]], 1)
        got = [[d["id"] for d in q] for q in data["result"]]
        assert got == [
            [c.chunk_id for c in expected[0]],
            [],
            [c.chunk_id for c in expected[1]],
            [c.chunk_id for c in expected[2]],
            [],
        ]
        assert service.health()["status"] == "ok"  # the index did not fail
        alone = http.post("/retrieve", json={"queries": ["poison"]})  # nothing else to blame: the index
        assert alone.status_code == 503
    service.close()


class _SlowEngine:
    """The sample engine whose batched searches each take ``delay_s``, counted."""

    def __init__(self, engine, delay_s):
        self.engine, self.delay_s, self.batches = engine, delay_s, 0

    def batch_search(self, *args):
        import time

        self.batches += 1
        time.sleep(self.delay_s)
        return self.engine.batch_search(*args)

    def __getattr__(self, name):
        return getattr(self.engine, name)


def test_a_client_that_goes_away_leaves_no_work_behind(engine):
    """A trainer whose request timed out: the batches after its disconnection never start."""
    import time

    import httpx

    from tests.ui.helpers import ServedApp

    slow = _SlowEngine(engine, delay_s=0.2)
    service = RetrievalService(slow, retrieve=RetrieveSettings(batch_queries=1, parallel_batches=1))
    with ServedApp(make_http_app(service)) as served:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{served.url}/retrieve", json={"queries": ["Sudan"] * 40, "method": "keywords"}, timeout=0.5
            )
        time.sleep(1.0)
        stopped = slow.batches
        time.sleep(1.0)
        assert stopped == slow.batches < 10  # 40 batches of 0.2 s had it gone on
        ok = httpx.post(
            f"{served.url}/retrieve", json={"queries": ["Sudan"], "method": "keywords"}, timeout=5
        )
        assert ok.status_code == 200
    service.close()


class _FullPrefetcher:
    """A query embedder whose bounded queue is full (Serve's ``BackPressureError``, as the ingress maps it)."""

    query_task = None

    async def aembed(self, text):
        raise Overloaded("the query embedder's queue is full")

    async def aembed_batch(self, texts):
        raise Overloaded("the query embedder's queue is full")


def test_a_full_embedder_queue_is_503_with_retry_after_and_not_a_failure(engine):
    service = RetrievalService(engine, prefetch=_FullPrefetcher())
    with TestClient(make_http_app(service, retry_after_s=3)) as http:
        for body in ({"queries": QUERIES}, {"query": QUERIES[0]}):
            response = retrieve(http, **body)
            assert (response.status_code, response.headers["retry-after"]) == (503, "3")
            assert response.json()["error"]["code"] == "overloaded"
        assert retrieve(http, queries=QUERIES, method="keywords").status_code == 200  # embeds nothing
        assert service.health()["status"] == "ok"
    service.close()


def test_the_ingress_reads_serves_back_pressure_as_overloaded():
    """``serve.retrieval.app._embedder_call``: the embedder deployment's ``max_queued_requests`` reached."""
    from ray.serve.exceptions import BackPressureError

    from serve.retrieval.app import _embedder_call

    class Full:
        async def remote(self, texts):
            raise BackPressureError(num_queued_requests=256, max_queued_requests=256)

    with pytest.raises(Overloaded, match="queue is full"):
        asyncio.run(_embedder_call(Full(), ["q"]))
