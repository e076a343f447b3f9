"""The retrieval service's HTTP app without Ray (Starlette's test client over the real-sample index): the
observations, the structured endpoints, errors, bounds and the bearer token."""

from __future__ import annotations

import json
import random

import pytest
from starlette.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.response_cache import ResponseCache
from serve.retrieval.service import Limits, RetrievalService
from sws.env import BackendFailure, WikiTools, call_tool, tool_schemas
from tests.serve.cases import MCP_ACCEPT, MCP_CALL, SEARCH, guarded_requests, opened, tool_cases

TOKEN = "unit-token"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def service(engine):
    service = RetrievalService(
        engine, tool_options={"max_query_chars": 200}, limits=Limits(max_body_bytes=4096), info={"index": {}}
    )
    yield service
    service.close()


@pytest.fixture(scope="module")
def client(service):
    with TestClient(make_http_app(service, token=TOKEN)) as client:
        yield client


def _call(client, name, arguments, headers=AUTH):
    return client.post("/call", json={"name": name, "arguments": arguments}, headers=headers)


def test_call_answers_what_call_tool_answers(client, engine, local_tools):
    for name, arguments in tool_cases(engine):
        response = _call(client, name, arguments)
        assert response.status_code == 200, (name, arguments, response.text)
        assert response.json() == {"content": local_tools.call_tool(name, arguments)}, (name, arguments)


def test_guarded_call_tool_is_call_tool_except_for_backend_failures(engine, local_tools):
    for name, arguments in tool_cases(engine):
        assert call_tool(local_tools, name, arguments) == local_tools.call_tool(name, arguments)


class _BrokenEngine:
    """A backend whose index went away under it."""

    def __init__(self, engine):
        self.engine = engine

    def search(self, *args):
        raise OSError("mmap of the chunks index failed")

    def search_titles(self, *args):
        return self.engine.search_titles(*args)

    def resolve_page(self, identifier):
        raise RuntimeError("titles index unavailable")

    def page_chunks(self, page_id):
        return self.engine.page_chunks(page_id)


def test_backend_failure_is_503_not_an_observation(engine):
    broken = RetrievalService(_BrokenEngine(engine))
    with TestClient(make_http_app(broken, retry_after_s=2.5)) as client:
        response = _call(client, "search", json.dumps({"query": "Sudan", "method": "keywords"}), headers={})
        assert response.status_code == 503
        assert response.headers["retry-after"] == "3"
        error = response.json()["error"]
        assert error["code"] == "backend_unavailable"
        assert "OSError: mmap of the chunks index failed" in error["message"]
        response = client.post("/open_url", json={"url": "https://en.wikipedia.org/wiki/1"})
        assert response.status_code == 503
        # the model's mistakes stay observations even with a broken backend
        response = _call(client, "search", json.dumps({"query": ""}), headers={})
        assert response.status_code == 200 and '"error": "query is empty"' in response.json()["content"]
        # only_title does not touch the broken part
        assert (
            _call(client, "search", '{"query": "Sudan", "only_title": true}', headers={}).status_code == 200
        )
    with pytest.raises(BackendFailure, match="OSError"):
        call_tool(WikiTools(_BrokenEngine(engine)), "search", '{"query": "x"}')


def test_openai_tool_call_shape_and_object_arguments(client, local_tools):
    arguments = json.dumps({"query": "Sudan", "top_k": 2, "method": "keywords"})
    expected = local_tools.call_tool("search", arguments)
    body = {"type": "function", "function": {"name": "search", "arguments": arguments}}
    assert client.post("/call", json=body, headers=AUTH).json()["content"] == expected
    body = {"name": "search", "arguments": {"query": "Sudan", "top_k": 2, "method": "keywords"}}
    assert client.post("/call", json=body, headers=AUTH).json()["content"] == expected


def test_structured_search(client, local_tools):
    arguments = {"query": "Olisadebe Polish footballer", "top_k": 4, "method": "rrf"}
    response = client.post("/search", json=arguments, headers=AUTH)
    assert response.status_code == 200
    data = response.json()
    assert data["content"] == local_tools.call_tool("search", json.dumps(arguments))
    assert (data["query"], data["top_k"], data["method"], data["only_title"]) == (
        arguments["query"],
        4,
        "rrf",
        False,
    )
    assert 1 <= len(data["hits"]) <= 4
    first = data["hits"][0]
    assert first["rank"] == 1 and first["title"] == "Emmanuel Olisadebe"
    assert (
        first["url"] == f"https://en.wikipedia.org/wiki/{first['page_id']}#chunk-{first['chunk_index'] + 1}"
    )
    assert first["chunk_id"] == f"{first['page_id']}_{first['chunk_index']}"
    assert first["source"] in ("both", "keywords", "vector")
    for hit in data["hits"]:
        assert hit["url"] in data["content"]
    clamped = client.post(
        "/search", json={"query": "the", "top_k": 10_000, "method": "keywords"}, headers=AUTH
    )
    assert clamped.json()["top_k"] == 50 and len(clamped.json()["hits"]) <= 50
    empty = client.post("/search", json={"query": "zzqxj unfindable", "method": "keywords"}, headers=AUTH)
    assert empty.json()["content"] == "No results found." and empty.json()["hits"] == []


def test_structured_open_url(client, engine, local_tools):
    page = engine.resolve_page("Emmanuel Olisadebe")
    url = f"https://en.wikipedia.org/wiki/{page}#chunk-2"
    data = client.post("/open_url", json={"url": url}, headers=AUTH).json()
    assert data["content"] == opened(local_tools, url)
    assert (data["page_id"], data["title"], data["chunk"], data["n_chunks"]) == (
        page,
        "Emmanuel Olisadebe",
        2,
        3,
    )
    assert data["outcome"] == "found"
    data = client.post("/open_url", json={"url": "/wiki/Emmanuel_Olisadebe"}, headers=AUTH).json()
    assert data["chunk"] is None and data["content"].startswith(f"# Emmanuel Olisadebe (ID: {page})")
    invalid = client.post("/open_url", json={"url": "https://example.com/x"}, headers=AUTH).json()
    assert (invalid["outcome"], invalid["page_id"], invalid["n_chunks"]) == ("invalid_url", None, 0)
    assert invalid["content"].startswith("Invalid Wikipedia URL.")
    for missing, outcome in (
        (f"https://en.wikipedia.org/wiki/{page}#chunk-9", "chunk_not_found"),
        ("https://en.wikipedia.org/wiki/999999999999", "not_found"),
    ):
        response = client.post("/open_url", json={"url": missing}, headers=AUTH)
        assert response.status_code == 200 and response.json()["outcome"] == outcome
        assert response.json()["content"] == opened(local_tools, missing)
    assert client.post("/open_url", json={"url": 5}, headers=AUTH).status_code == 422


def test_tools_health_info(client):
    assert client.get("/tools", headers=AUTH).json() == {"tools": tool_schemas()}
    assert client.get("/health").json()["status"] == "ok"  # no token needed
    info = client.get("/info", headers=AUTH).json()
    assert "index" in info and isinstance(info["pid"], int)


def test_bearer_token(client):
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}):
        response = client.get("/tools", headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == "unauthorized"
    assert _call(client, "search", '{"query": "x"}', headers={}).status_code == 401
    assert client.get("/tools", headers={"authorization": f"bearer {TOKEN}"}).status_code == 200


def test_bounds(client, local_tools):
    big = {"name": "search", "arguments": json.dumps({"query": "x" * 5000})}
    response = client.post("/call", json=big, headers=AUTH)
    assert response.status_code == 413 and response.json()["error"]["code"] == "body_too_large"

    def chunks():
        for _ in range(10):
            yield b" " * 1000

    streamed = client.post("/call", content=chunks(), headers={**AUTH, "content-type": "application/json"})
    assert streamed.status_code == 413
    long_query = json.dumps({"query": "Sudan " * 50})
    observation = json.loads(_call(client, "search", long_query).json()["content"])
    assert observation["error_type"] == "ValueError" and "at most 200" in observation["error"]
    assert observation["arguments"] == long_query
    response = client.post("/search", json={"query": "Sudan " * 50}, headers=AUTH)
    assert response.status_code == 400 and "at most 200" in response.json()["error"]["message"]
    short = json.dumps({"query": "Sudan", "top_k": 2, "method": "keywords"})
    assert _call(client, "search", short).json()["content"] == local_tools.call_tool("search", short)


BAD_REQUESTS = [
    ("POST", "/call", b"{bad json", "application/json", 400, "invalid_json"),
    ("POST", "/call", b"[1, 2]", "application/json", 400, "invalid_json"),
    ("POST", "/call", b'"just a string"', "application/json", 400, "invalid_json"),
    ("POST", "/call", b"\xff\xfe\xfa not utf-8", "application/json", 400, "invalid_json"),
    ("POST", "/call", b"[" * 100_000, "application/json", 413, "body_too_large"),
    ("POST", "/call", b"[" * 3000 + b"]" * 3000, "application/json", 413, "body_too_large"),
    ("POST", "/search", b"[" * 2000 + b"]" * 2000, "application/json", 422, "invalid_json"),
    ("POST", "/call", b'{"name": 5}', "application/json", 400, "invalid_argument"),
    ("POST", "/call", b'{"name": "search", "arguments": 5}', "application/json", 400, "invalid_argument"),
    ("POST", "/call", b'{"name": "search"}', "text/plain", 415, "unsupported_media_type"),
    ("POST", "/call", b"name=search", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ("POST", "/call", b'{"name": "search"}', None, 415, "unsupported_media_type"),
    ("POST", "/search", b"{}", "application/json", 422, "invalid_request"),  # as the reference server
    ("POST", "/search", b'{"query": "x", "method": "nope"}', "application/json", 422, "invalid_request"),
    ("POST", "/search", b'{"query": ["x"]}', "application/json", 422, "invalid_request"),
    ("POST", "/search", b'{"query": " "}', "application/json", 400, "invalid_argument"),
    ("GET", "/call", None, None, 405, "method_not_allowed"),
    ("PUT", "/search", b"{}", "application/json", 405, "method_not_allowed"),
    ("DELETE", "/tools", None, None, 405, "method_not_allowed"),
    ("GET", "/nope", None, None, 404, "not_found"),
    ("POST", "/v1/chat/completions", b"{}", "application/json", 404, "not_found"),
    ("GET", "/call/../../etc/passwd", None, None, 404, "not_found"),
]


@pytest.mark.parametrize(("method", "path", "body", "content_type", "status", "code"), BAD_REQUESTS)
def test_bad_input_is_a_4xx_json_error(client, method, path, body, content_type, status, code):
    headers = dict(AUTH)
    if content_type:
        headers["content-type"] = content_type
    response = client.request(method, path, content=body, headers=headers)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    if code:
        assert response.json()["error"]["code"] == code


def test_fuzzed_bodies_never_500(client):
    rng = random.Random(7)
    values = [
        None,
        True,
        0,
        -1,
        2**70,
        1.5,
        float("nan"),
        "",
        "x",
        "\ud800",
        [],
        {},
        ["a"],
        {"a": 1},
        "é" * 50,
    ]
    keys = ["name", "arguments", "query", "top_k", "method", "only_title", "url", "function"]
    seen = set()
    for _ in range(300):
        path = rng.choice(["/call", "/search", "/open_url"])
        if rng.random() < 0.25:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        else:
            obj = {rng.choice(keys): rng.choice(values) for _ in range(rng.randrange(0, 4))}
            if path == "/call" and rng.random() < 0.7:
                obj["name"] = rng.choice(["search", "open_url", "submit_answer", "x"])
                obj["arguments"] = json.dumps({rng.choice(keys): rng.choice(values) for _ in range(3)})
            body = json.dumps(obj).encode("utf-8", "surrogatepass")
        response = client.post(path, content=body, headers={**AUTH, "content-type": "application/json"})
        assert response.status_code < 500, (path, body, response.text)
        response.json()
        seen.add(response.status_code)
    assert {200, 400} <= seen


def test_request_coalescer_sends_concurrent_items_together():
    import asyncio

    from serve.retrieval.embedding import RequestCoalescer

    sent: list[list[int]] = []

    async def send(items):
        sent.append(list(items))
        await asyncio.sleep(0.01)
        if -1 in items:
            raise RuntimeError("embedder down")
        return [i * 10 for i in items]

    async def scenario():
        coalesce = RequestCoalescer(send, max_items=4, max_in_flight=2)
        assert await coalesce(1) == 10  # a lone item leaves at once
        results = await asyncio.gather(*(coalesce(i) for i in range(10)))
        assert results == [i * 10 for i in range(10)]
        failed = await asyncio.gather(coalesce(-1), coalesce(2), return_exceptions=True)
        return failed

    failed = asyncio.run(scenario())
    assert sent[0] == [1]
    assert sent[1:3] == [[0], [1]] and all(len(batch) <= 4 for batch in sent)  # 2 in flight, rest queued
    assert sorted(i for batch in sent[1:-2] for i in batch) == list(range(10))
    assert isinstance(failed[0], RuntimeError)


def test_request_coalescer_with_one_list_in_flight_sends_late_arrivals_together():
    """The embedder's batches: items arriving one by one while a list runs leave together when it returns,
    not the first of them alone (``@serve.batch`` formed a lone batch then); items arriving at a free slot wait
    ``linger_s`` for company, a full list never waits, and items that waited for a busy slot do not linger."""
    import asyncio

    from serve.retrieval.embedding import RequestCoalescer

    sent: list[list[int]] = []

    async def scenario(linger_s: float, max_items: int = 64):
        sent.clear()
        gate = asyncio.Event()

        async def send(items):
            sent.append(list(items))
            await gate.wait()
            return items

        coalesce = RequestCoalescer(send, max_items=max_items, max_in_flight=1, linger_s=linger_s)
        calls = [asyncio.ensure_future(coalesce(i)) for i in range(3)]  # arrive in one loop turn
        await asyncio.sleep(0)
        for i in range(3, 8):  # arrive one loop turn apart while the first list runs
            calls.append(asyncio.ensure_future(coalesce(i)))
            await asyncio.sleep(0)
        gate.set()
        assert await asyncio.gather(*calls) == list(range(8))
        return list(sent)

    assert asyncio.run(scenario(0.0)) == [[0], [1, 2, 3, 4, 5, 6, 7]]
    assert asyncio.run(scenario(0.05)) == [list(range(8))]  # all came within the linger
    assert asyncio.run(scenario(60.0, max_items=3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_mcp_get_streams_are_capped_and_closed_when_idle(service):
    """A stateless server sends nothing on a GET stream, yet each holds a request slot: beyond
    ``max_streams`` open ones a GET gets 503 (JSON, Retry-After); an idle stream is closed, freeing its slot."""
    import asyncio

    import httpx

    from serve.retrieval.mcp_endpoint import make_mcp
    from tests.ui.helpers import ServedApp

    app = make_http_app(service, mcp=make_mcp(service, max_streams=2, stream_idle_s=1.0, retry_after_s=3))
    sse = {"accept": "text/event-stream"}

    async def scenario(url):
        async with httpx.AsyncClient(timeout=30) as client:
            held = [
                await client.send(client.build_request("GET", url, headers=sse), stream=True) for _ in "ab"
            ]
            refused = await client.get(url, headers=sse)
            ended = [(r.status_code, await r.aread()) for r in held]  # closed by the server when idle
            again = await client.send(client.build_request("GET", url, headers=sse), stream=True)
            await again.aclose()
            return refused, ended, again.status_code

    with ServedApp(app, lifespan="on") as served:
        refused, ended, again = asyncio.run(scenario(f"{served.url}/mcp"))
    assert refused.status_code == 503 and refused.headers["retry-after"] == "3"
    assert refused.json()["error"]["code"] == "too_many_streams"
    assert ended == [(200, b""), (200, b"")]
    assert again == 200


class _CountingEngine:
    """The real engine, counting the page reads ``open_url`` makes."""

    def __init__(self, engine):
        self.engine, self.reads = engine, 0

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def page_chunks(self, page_id):
        self.reads += 1
        return self.engine.page_chunks(page_id)


def test_open_url_cache_answers_identical_bytes_and_is_bounded(engine):
    page = engine.resolve_page("Emmanuel Olisadebe")
    urls = ["https://example.com/x", "https://en.wikipedia.org/wiki/999999999999"]
    urls += [f"https://en.wikipedia.org/wiki/{page}", f"https://en.wikipedia.org/wiki/{page}#chunk-2"]
    requests = [
        ("/open_url", {"url": 5}),
        ("/call", {"name": "open_url", "arguments": "{"}),
    ]  # 422, error text
    requests += [("/open_url", {"url": url}) for url in urls]
    requests += [("/call", {"name": "open_url", "arguments": json.dumps({"url": url})}) for url in urls]
    counting = _CountingEngine(engine)
    plain, cached = RetrievalService(engine), RetrievalService(counting)
    with (
        TestClient(make_http_app(plain)) as reference,
        TestClient(make_http_app(cached, open_url_cache=3)) as client,
    ):
        for _ in range(2):
            for path, body in requests:
                want, got = reference.post(path, json=body), client.post(path, json=body)
                assert (got.status_code, got.headers, got.content) == (
                    want.status_code,
                    want.headers,
                    want.content,
                )
        counting.reads = 0
        for path, body in requests[-3:] * 2:  # the 3 most recent answers: from the cache, no page read
            assert client.post(path, json=body).content == reference.post(path, json=body).content
        assert counting.reads == 0
        client.post(requests[4][0], json=requests[4][1])  # long evicted (3 entries): read again
        assert counting.reads > 0


def test_response_cache_is_a_bounded_lru():
    cache = ResponseCache(2)
    cache.put("a", b"1")
    cache.put("b", b"2")
    assert cache.get("a") == b"1"  # a is now the most recent
    cache.put("c", b"3")
    assert (len(cache), cache.get("b"), cache.get("a"), cache.get("c")) == (2, None, b"1", b"3")
    off = ResponseCache(0)
    off.put("a", b"1")
    assert (len(off), off.get("a")) == (0, None)
    with pytest.raises(ValueError, match="at least 0"):
        ResponseCache(-1)


def test_foreign_host_or_origin_is_refused(service):
    """DNS rebinding: a page whose own name points at 127.0.0.1 reads a token-less service as its own site
    (``Host``: that name), any other page can send requests at it (``Origin``: the page's); both get 403 on
    every route but /health, MCP included. Loopback names (any port) and requests without Origin pass."""
    from serve.retrieval.mcp_endpoint import make_mcp
    from sws.host_guard import HostPolicy

    app = make_http_app(service, mcp=make_mcp(service), hosts=HostPolicy("127.0.0.1"))
    foreign = [
        ({"host": "evil.example:11536", "origin": "http://evil.example:11536"}, "host_not_allowed"),
        ({"host": "evil.example"}, "host_not_allowed"),
        ({"origin": "http://evil.example"}, "origin_not_allowed"),
        ({"host": "localhost:11536", "origin": "null"}, "origin_not_allowed"),
    ]
    with TestClient(app, base_url="http://127.0.0.1:11536") as client:
        for method, path, headers, body in guarded_requests({}):
            for sent, code in foreign:
                response = client.request(method, path, headers={**headers, **sent}, json=body)
                assert response.status_code == 403, (path, sent, response.text)
                assert response.json()["error"]["status"] == 403 and response.json()["error"]["code"] == code
            for host in ("127.0.0.1:11536", "localhost:8080", "[::1]:11536"):
                local = {**headers, "host": host, "origin": f"http://{host}"}
                assert client.request(method, path, headers=local, json=body).status_code == 200, (path, host)
            assert client.request(method, path, headers=headers, json=body).status_code == 200  # no Origin
        assert client.get("/health", headers={"host": "evil.example"}).status_code == 200  # load balancers
        answered = client.post("/mcp", headers=MCP_ACCEPT, json=MCP_CALL).json()
    assert answered["result"]["content"][0]["text"] == service.call("search", json.dumps(SEARCH))
