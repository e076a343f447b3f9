"""Queries embedded by an OpenAI-compatible ``/v1/embeddings`` server (``--embedding-endpoint``,
``serve.embedding.endpoint``, ``tools.embedding_endpoint``), against a real local server over the packaged
MiniLM (``tests/index/embedding_server.py``): the reference's request shape, the same observations as the
local embedder, and a server that is down or answers a wrong dimension or NaN is one line at start and a 503
per request while serving, never a silent vector. No Ray."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from serve.retrieval.embedding import QueryEmbedder, open_query_embedder
from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.cli import cli
from sws.config import QueryEmbeddingConfig, ToolClientConfig, load_config
from sws.index import EmbeddingError
from sws.index.embedders import QWEN3_QUERY_TASK
from sws.index.manifest import read_manifest
from sws.index.reference import import_reference
from sws.search import SearchEngine
from sws.stages import StageError, environment
from sws.transport import InProcessTools
from tests.index.embedding_server import EmbeddingServer
from tests.index.helpers import reference_index

QUESTION = "Who founded KickassTorrents?"
VECTOR = json.dumps({"query": QUESTION, "method": "vector", "top_k": 3})
BAD = {  # a spoiled answer -> what the error says
    "dim": "returned dimension 385, expected 384",
    "nan": "returned NaN or Inf values",
    "down": "503 Service Unavailable",
}


@pytest.fixture(scope="module")
def indexes(leads_root, tmp_path_factory):
    """The leads index in the reference's layout, adopted twice: with its own MiniLM space ("minilm") and with
    the reference's default query embedder, Qwen3-Embedding-0.6B with its instruction ("qwen3")."""
    root = tmp_path_factory.mktemp("endpoint")
    minilm = reference_index(leads_root, root, "ip")
    import_reference(root / "reference", root / "qwen3")
    return {"minilm": minilm, "qwen3": root / "qwen3"}


@pytest.fixture(scope="module")
def served(embedder):
    with EmbeddingServer(embedder) as server:
        yield server


@pytest.fixture
def server(served):
    served.mode, served.requests = "ok", []
    yield served
    served.mode = "ok"


def _search(index, *args):
    return CliRunner().invoke(cli, ["search", "--index", str(index), *args])


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("mode", ["ok", "no-index"])
def test_sws_search_through_the_endpoint_answers_as_the_local_embedder(server, indexes, leads_root, mode):
    server.mode = mode
    for method in ("vector", "rrf"):
        args = [QUESTION, "--method", method, "--top-k", "5"]
        remote = _search(indexes["minilm"], *args, "--embedding-endpoint", server.url)
        local = _search(leads_root / "index", *args)
        assert remote.exit_code == local.exit_code == 0, remote.output
        assert remote.stdout == local.stdout, method
    assert [r["input"] for r in server.requests] == [["ping"], [QUESTION]] * 2  # the check, then the query


def test_the_request_is_the_references_and_the_space_the_indexs(server, indexes, monkeypatch):
    monkeypatch.setenv("SWS_EMBEDDING_API_KEY", "simple_wiki")
    tools = InProcessTools.open(indexes["qwen3"], embedding_endpoint=server.url + "/v1")
    assert tools.call_tool("search", VECTOR).startswith("1. [KickassTorrents]")
    assert server.requests[-1] == {
        "auth": "Bearer simple_wiki",
        "model": "Qwen/Qwen3-Embedding-0.6B",
        "input": [f"Instruct: {QWEN3_QUERY_TASK}\nQuery: {QUESTION}"],
        "encoding_format": "float",
    }
    embedder = tools.tools.backend.index.embedder
    assert embedder.fingerprint == read_manifest(indexes["qwen3"])["embedder"]["fingerprint"]
    # the batching deployment embeds there too, and /info says so
    described = QueryEmbedder.func_or_class(str(indexes["qwen3"]), endpoint=server.url).describe()
    assert (described["runtime"], described["endpoint"]) == ("openai", server.url)
    assert described["fingerprint"] == embedder.fingerprint


@pytest.mark.parametrize("mode", [*BAD, "refused"])
def test_a_bad_endpoint_is_one_line_at_start(server, indexes, mode):
    server.mode = mode
    url = _closed_port_url() if mode == "refused" else server.url
    message = BAD.get(mode, "embedding request to")
    result = _search(indexes["qwen3"], "bitcoin", "--method", "keywords", "--embedding-endpoint", url)
    assert result.exit_code == 1 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    with pytest.raises(EmbeddingError, match=message):
        open_query_embedder(indexes["qwen3"], endpoint=url)
    with pytest.raises(StageError, match=message):  # sws eval, before its workers open the tools
        environment(ToolClientConfig(embedding_endpoint=url), str(indexes["qwen3"]))
    result = CliRunner().invoke(cli, ["serve", "--index", str(indexes["qwen3"]), "--embedding-endpoint", url])
    assert result.exit_code == 1 and message in result.output, result.output  # before Ray starts


def test_a_bad_answer_while_serving_is_503_and_the_service_recovers(server, indexes):
    engine = SearchEngine.open(
        indexes["qwen3"], embedder=open_query_embedder(indexes["qwen3"], endpoint=server.url)
    )
    service = RetrievalService(engine)
    replica = QueryEmbedder.func_or_class(str(indexes["qwen3"]), endpoint=server.url)
    with TestClient(make_http_app(service)) as client:
        for mode, message in BAD.items():
            server.mode = mode
            response = client.post("/call", json={"name": "search", "arguments": VECTOR})
            assert response.status_code == 503, (mode, response.text)
            error = response.json()["error"]
            assert error["code"] == "backend_unavailable" and message in error["message"], error
            keywords = {"query": "bitcoin", "method": "keywords"}
            assert client.post("/search", json=keywords).status_code == 200  # keywords need no embedding
            with pytest.raises(EmbeddingError, match=message):  # the deployment's failure: 503 at the ingress
                asyncio.run(replica.embed_batch(["x"]))
        server.mode = "ok"
        assert client.post("/call", json={"name": "search", "arguments": VECTOR}).status_code == 200
    service.close()


def test_the_switch_is_one_key_and_one_flag():
    cfg = load_config("local", ["serve.embedding.endpoint=http://127.0.0.1:17000"])
    assert cfg.serve.embedding.endpoint == "http://127.0.0.1:17000" and cfg.tools.embedding_endpoint is None
    assert QueryEmbeddingConfig().endpoint is None  # unset: the index's embedder, as before
    with pytest.raises(ValueError, match="expected the http"):
        QueryEmbeddingConfig(endpoint="127.0.0.1:17000")
    with pytest.raises(ValueError, match="tools.embedding_endpoint"):
        ToolClientConfig(embedding_endpoint="localhost")
    with pytest.raises(ValueError, match="local runtime"):
        QueryEmbeddingConfig(endpoint="http://h:1", runtime="torch")
    for command in (["serve"], ["eval"], ["search"]):
        assert "--embedding-endpoint" in CliRunner().invoke(cli, [*command, "--help"]).output
