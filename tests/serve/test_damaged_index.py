"""A damaged index is the service's fault, never the model's: 503 JSON on /call, /search and /open_url,
/health not ok, Serve's replica probe and ``verify_on_open`` name the file; the model's genuine argument
errors keep their exact observations. Real Tantivy over the leads index, no Ray."""

import json
from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.env import INVALID_URL_MESSAGE, WikiTools, call_tool
from sws.index import IndexCorruptError
from sws.search import SearchEngine

KEYWORDS = json.dumps({"query": "Bitcoin", "method": "keywords"})
ARGUMENT_ERRORS = [  # (tool, arguments): the model's own mistakes, answered before the index is read
    ("search", '{"query": ""}'),
    ("search", '{"query": "   "}'),
    ("search", '{"query": "x", "method": "bm25"}'),
    ("search", '{"query": "x", "only_title": "maybe"}'),
    ("search", "[1, 2]"),
    ("search", "{bad"),
    ("open_url", "{}"),
    ("open_url", '{"url": "https://example.com/not-wiki"}'),
    ("nope", "{}"),
]


@pytest.fixture
def damaged_service(damaged_index):
    service = RetrievalService(SearchEngine.open(damaged_index))
    yield service
    service.close()


def test_damaged_index_is_503_json_on_every_route_and_health_fails(damaged_service):
    with TestClient(make_http_app(damaged_service)) as client:
        assert client.get("/health").json()["status"] == "ok"  # nothing has failed yet
        requests = [
            ("/call", {"name": "search", "arguments": KEYWORDS}),
            ("/call", {"name": "open_url", "arguments": json.dumps({"url": "/wiki/Bitcoin"})}),
            ("/search", {"query": "Bitcoin", "method": "keywords"}),
            ("/open_url", {"url": "https://en.wikipedia.org/wiki/Bitcoin#chunk-1"}),
        ]
        for path, body in requests:
            response = client.post(path, json=body)
            assert response.status_code == 503, (path, response.text)
            assert response.headers["content-type"] == "application/json"
            error = response.json()["error"]
            assert error["code"] == "backend_unavailable" and "IO error" in error["message"], error
            assert "Fix tool arguments" not in response.text
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json()["status"] == "failing" and "IO error" in health.json()["error"]


def test_health_recovers_once_the_failure_window_has_passed(damaged_index):
    service = RetrievalService(SearchEngine.open(damaged_index), failure_window_s=0.0)
    with TestClient(make_http_app(service)) as client:
        assert client.post("/call", json={"name": "search", "arguments": KEYWORDS}).status_code == 503
        assert client.get("/health").status_code == 200
    service.close()


def test_argument_errors_keep_their_observations_over_a_damaged_index(damaged_index, leads_root):
    damaged = WikiTools(SearchEngine.open(damaged_index))
    healthy = WikiTools(SearchEngine.open(leads_root / "index"))
    for name, arguments in ARGUMENT_ERRORS:
        observation = call_tool(damaged, name, arguments)
        assert observation == healthy.call_tool(name, arguments), (name, arguments)
        assert observation.startswith('{"status": "error"') or observation == INVALID_URL_MESSAGE


def test_lone_surrogates_are_validated_before_the_index(leads_root):
    """Tantivy cannot encode lone surrogates; argument handling replaces them, so the guarded call (which
    treats every index exception as a service fault) answers as the plain one."""
    engine = SearchEngine.open(leads_root / "index")
    tools = WikiTools(engine)
    calls = [
        ("search", json.dumps({"query": "Bit\ud800coin", "method": "keywords", "top_k": 3})),
        ("search", json.dumps({"query": "Bit\ud800coin", "only_title": True})),
        ("search", json.dumps({"query": "Bitcoin", "top_k": "many", "method": "keywords"})),  # top_k 10
        ("open_url", json.dumps({"url": "https://en.wikipedia.org/wiki/Bit\ud800coin"})),
    ]
    for name, arguments in calls:
        observation = call_tool(tools, name, arguments)
        assert observation == tools.call_tool(name, arguments)
        assert not observation.startswith('{"status": "error"'), observation


def test_verify_on_open_refuses_the_app_and_the_replica_probe_checks_sizes(damaged_index):
    from serve.retrieval import RetrievalIngress, build_app, load_serve_config
    from sws.index.manifest import read_manifest

    with pytest.raises(IndexCorruptError, match=r"\.store is damaged: its xxh3_128 checksum differs"):
        build_app({"index": str(damaged_index), "verify_on_open": True, "embedding": {"batching": False}})
    build_app({"index": str(damaged_index), "embedding": {"batching": False}})  # sizes match: deployable

    replica = SimpleNamespace(  # the probe alone, without starting Serve
        cfg=load_serve_config({"index": str(damaged_index)}), manifest=read_manifest(damaged_index)
    )
    check_health = RetrievalIngress.func_or_class.check_health
    check_health(replica)
    shard = damaged_index / "faiss" / "shard-00001.faiss"
    shard.write_bytes(shard.read_bytes()[:-1])
    with pytest.raises(IndexCorruptError, match="shard-00001.faiss has"):
        check_health(replica)
