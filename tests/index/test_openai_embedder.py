"""The /v1/embeddings client against a real local HTTP server: batching, order, retries, errors."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from sws.index import EmbeddingError, OpenAIEmbedder
from sws.index.embedders import QWEN3_QUERY_TASK


class _Server:
    """Answers each request with the next scripted status (200 once the script is used up)."""

    def __init__(self):
        self.requests, self.script, self.vector = [], [], None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                status = server.script.pop(0) if server.script else 200
                if status == 200:
                    data = [
                        {"index": i, "embedding": server.vector or [float(len(t)), 1.0, 0.0]}
                        for i, t in enumerate(body["input"])
                    ]
                    payload = json.dumps({"data": data[::-1]}).encode()  # out of order on purpose
                else:
                    payload = b'{"error": "busy"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.httpd.shutdown()


def test_batches_order_and_normalisation(server):
    emb = OpenAIEmbedder("Qwen/Qwen3-Embedding-0.6B", base_url=server.url + "/v1", api_key="k", batch_size=2)
    out = emb.embed_documents(["a", "bbb", "cc", "dddd", "e"])
    expected = np.array([[n, 1, 0] for n in (1, 3, 2, 4, 1)], dtype=np.float32)
    np.testing.assert_allclose(out, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    assert [len(r["input"]) for r in server.requests] == [2, 2, 1] and emb.dim == 3
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert server.requests[0] == {
        "path": "/v1/embeddings",
        "auth": "Bearer k",
        "model": "Qwen/Qwen3-Embedding-0.6B",
        "input": ["a", "bbb"],
        "encoding_format": "float",
    }


def test_query_instruction_for_qwen3_models(server):
    emb = OpenAIEmbedder("Qwen/Qwen3-Embedding-0.6B", base_url=server.url, dim=3)
    emb.embed_queries([" who? "])
    assert server.requests[0]["input"] == [f"Instruct: {QWEN3_QUERY_TASK}\nQuery: who?"]
    assert OpenAIEmbedder("bge-small", base_url=server.url, dim=3).query_task == ""


def test_transient_errors_are_retried(server):
    server.script = [503, 429]
    emb = OpenAIEmbedder("m", base_url=server.url, dim=3, max_attempts=3, backoff_s=0.01)
    assert emb.embed_documents(["x"]).shape == (1, 3)
    assert len(server.requests) == 3


def test_errors_become_embedding_errors(server):
    emb = OpenAIEmbedder("m", base_url=server.url, dim=3, max_attempts=2, backoff_s=0.01)
    server.script = [503, 503]
    with pytest.raises(EmbeddingError, match="503"):
        emb.embed_documents(["x"])
    server.script = [400]
    with pytest.raises(EmbeddingError, match="400"):
        emb.embed_documents(["x"])
    assert len(server.requests) == 3  # a 400 is not retried
    server.vector = [float("nan"), 1.0, 0.0]
    with pytest.raises(EmbeddingError, match="NaN"):
        emb.embed_documents(["x"])
    with pytest.raises(EmbeddingError, match="dimension 3, expected 5"):
        OpenAIEmbedder("m", base_url=server.url, dim=5).embed_documents(["x"])


def test_unreachable_server_fails_after_retries():
    emb = OpenAIEmbedder(
        "m", base_url="http://127.0.0.1:9", dim=3, max_attempts=2, timeout_s=0.5, backoff_s=0.01
    )
    with pytest.raises(EmbeddingError, match="failed"):
        emb.embed_documents(["x"])
    assert "api_key" not in emb.spec() and emb.spec()["base_url"] == "http://127.0.0.1:9"
