"""``/search``, ``/open_url`` and ``/random`` answer as the reference server does (the conformance table in
``conformance.py``), over the real app in process; the reference client's way of reading them; ``/random``
deterministic per seed and uniform over pages; no hostile input gets a 500."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from starlette.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.config.serving import ServeConfig
from sws.env import WikiTools
from tests.env.test_fuzz import random_arguments, random_value
from tests.serve.cases import opened
from tests.serve.conformance import check, conformance_rows, send


@pytest.fixture(scope="module")
def client(engine):
    service = RetrievalService(engine)  # the served defaults: max_query_chars 4096, 64 KiB bodies
    cache = ServeConfig().open_url_cache_entries  # and its open_url cache
    with TestClient(make_http_app(service, open_url_cache=cache)) as client:
        yield client
    service.close()


@pytest.fixture(scope="module")
def tools_for(engine):
    return lambda **options: WikiTools(engine, **options)


def test_conformance_table(client, engine, tools_for):
    rows = conformance_rows(engine.resolve_page("Emmanuel Olisadebe"))
    for row in rows + rows:  # the second time, open_url answers come from the cache
        check(row, send(client, row), tools_for)


def reference_client_call(http: Any, name: str, arguments: dict) -> str:
    """What the reference's ``execute_tool`` does with a call (CONTRACT §1.2, §2.1): normalise, POST,
    ``raise_for_status()``, read ``content``."""
    if name == "search":
        body = {
            "query": str(arguments.get("query") or ""),
            "top_k": int(arguments.get("top_k", 10)),
            "only_title": bool(arguments.get("only_title", False)),
            "method": arguments.get("method", "rrf"),
            "max_chars_per_result": 1024,
        }
        response = http.post("/search", json=body)
    else:
        response = http.post("/open_url", json={"url": str(arguments["url"])})
    response.raise_for_status()
    return response.json().get("content") or ""


def test_the_reference_client_reads_every_tool_outcome(client, engine, local_tools):
    page = engine.resolve_page("Emmanuel Olisadebe")
    calls = [
        ("search", {"query": "Olisadebe Polish footballer", "top_k": 3}),
        ("search", {"query": "zzqxj unfindable", "method": "keywords"}),
        ("open_url", {"url": f"https://en.wikipedia.org/wiki/{page}#chunk-1"}),
        ("open_url", {"url": f"https://en.wikipedia.org/wiki/{page}#chunk-99"}),
        ("open_url", {"url": "https://en.wikipedia.org/wiki/999999999999"}),
        ("open_url", {"url": "https://example.com/x"}),
        ("open_url", {"url": ""}),
        ("open_url", {"url": 307}),  # the client sends str(307)
    ]
    for name, arguments in calls:
        if name == "search":
            expected = local_tools.call_tool(name, json.dumps(arguments))
        else:
            expected = opened(local_tools, str(arguments["url"]))
        assert reference_client_call(client, name, arguments) == expected, (name, arguments)
    with pytest.raises(Exception, match="Client error '400 Bad Request'"):  # HTTPStatusError, as there
        reference_client_call(client, "search", {"query": "   "})


def test_random_is_deterministic_per_seed_and_uniform_over_pages(client, engine, local_tools):
    first = client.post("/random", json={"mode": "chunk", "seed": 42}).json()
    assert client.post("/random", json={"seed": 42}).json() == first
    assert client.get("/random", params={"seed": 42}).json() == first
    assert first["content"] == opened(local_tools, first["url"])
    assert first["content"].startswith(f"# {first['title']} (chunk {first['chunk']}/{first['n_chunks']})")
    page = client.get("/random", params={"mode": "page", "seed": 42}).json()
    assert page["content"].startswith(f"# {page['title']} (ID: {page['page_id']})") and page["chunk"] is None
    keyword = engine.index.keyword
    pages = {keyword.chunk_at_row(row).page_id for row in range(keyword.num_chunks)}
    drawn = [client.post("/random", json={"mode": "page", "seed": seed}).json() for seed in range(300)]
    assert {d["page_id"] for d in drawn} == pages  # every page, long or short, comes up
    assert len({d["page_id"] for d in drawn[:3]}) > 1  # seeds differ


def test_search_options_reach_the_hit_records(client, engine):
    data = client.post("/search", json={"query": "Sudan", "top_k": 2, "link_mode": "title"}).json()
    assert all(hit["url"] in data["content"] for hit in data["hits"])
    assert data["hits"][0]["url"].startswith("https://en.wikipedia.org/wiki/") and not any(
        hit["url"].split("/wiki/")[1].split("#")[0].isdigit() for hit in data["hits"]
    )


def test_hostile_tool_arguments_never_500(client):
    """The ``/call`` fuzz corpus (``tests/env/test_fuzz.py``) as bodies of the structured endpoints."""
    rng = random.Random(20260602)
    statuses: dict[str, set[int]] = {}
    for _ in range(1500):
        path = rng.choice(["/search", "/open_url", "/random"])
        if path == "/random":
            arguments = json.dumps({"mode": random_value(rng), "seed": random_value(rng)})
        else:
            arguments = random_arguments(rng, path.strip("/")) or ""
        body = arguments.encode("utf-8", "surrogatepass")
        response = client.post(path, content=body, headers={"content-type": "application/json"})
        assert response.status_code < 500, (path, arguments[:300], response.text[:300])
        assert isinstance(response.json(), dict)
        statuses.setdefault(path, set()).add(response.status_code)
    assert {200, 422} <= statuses["/search"] & statuses["/open_url"], statuses
