"""``/retrieve`` driven over real HTTP (uvicorn on 127.0.0.1) the way the RL frameworks' clients drive it,
reimplemented here from their documented behaviour so that a drift in our format shows up as a failure:

- Search-R1 / veRL's ``SearchTool`` (``search_r1_like_utils``): POST ``{"queries", "topk", "return_scores":
  true}``, retry 500/502/503/504, connection errors and timeouts with backoff, give up at once on any other
  status; each document's ``contents`` is split into the title (first line) and the text, and the hits are
  rendered ``Doc i(Title: <title>) <text>``.
- rLLM: POST ``{"query", "top_k"}``, read ``results[*].document.contents`` and ``score``.
- ASearcher: the Search-R1 form, then each document's ``url`` opened with ``POST /access``.
"""

from __future__ import annotations

import time

import httpx
import pytest

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from tests.ui.helpers import ServedApp

RETRYABLE = {500, 502, 503, 504}
QUESTIONS = ["history of Sudan", "who directed Nosferatu"]


def search_r1_retrieve(url: str, queries: list[str], topk: int, attempts: int = 4) -> tuple[list, int]:
    """veRL's ``call_search_api``: the parsed result and the number of requests it took."""
    for attempt in range(1, attempts + 1):
        try:
            response = httpx.post(
                f"{url}/retrieve", json={"queries": queries, "topk": topk, "return_scores": True}, timeout=30
            )
        except (httpx.ConnectError, httpx.TimeoutException):
            time.sleep(0.05 * attempt)
            continue
        if response.status_code in RETRYABLE:
            time.sleep(0.05 * attempt)
            continue
        response.raise_for_status()  # any other 4xx: no retry
        return response.json()["result"], attempt
    raise RuntimeError("retrieval failed after retries")


def passages_to_string(hits: list[dict]) -> str:
    """Search-R1's ``_passages2string``."""
    lines = []
    for i, hit in enumerate(hits):
        contents = hit["document"]["contents"]
        title, text = contents.split("\n")[0], "\n".join(contents.split("\n")[1:])
        lines.append(f"Doc {i + 1}(Title: {title}) {text}\n")
    return "".join(lines)


class _FlakyEngine:
    """The sample engine whose first ``failures`` batched searches fail (a replica's index not yet mapped)."""

    def __init__(self, engine, failures: int):
        self.engine, self.failures = engine, failures

    def batch_search(self, *args):
        if self.failures:
            self.failures -= 1
            raise OSError("index not mapped yet")
        return self.engine.batch_search(*args)

    def __getattr__(self, name):
        return getattr(self.engine, name)


@pytest.fixture
def served(engine):
    def serve(backend):
        service = RetrievalService(backend)
        return service, ServedApp(make_http_app(service, retry_after_s=0.1))

    return serve


def test_the_search_r1_client_reads_titles_and_texts_and_retries_a_503(served, engine):
    service, app = served(_FlakyEngine(engine, failures=1))
    with app:
        result, requests = search_r1_retrieve(app.url, QUESTIONS, 3)
        with pytest.raises(httpx.HTTPStatusError, match="422"):
            search_r1_retrieve(app.url, QUESTIONS, 0)  # never succeeds: given up at once
    service.close()
    assert requests == 2 and len(result) == len(QUESTIONS)
    for hits, chunks in zip(result, engine.batch_search(QUESTIONS, 3, "rrf"), strict=True):
        rendered = passages_to_string(hits)
        for i, hit in enumerate(chunks, 1):
            assert f'Doc {i}(Title: "{hit.chunk.title}") {hit.chunk.text[:200]}' in rendered


def test_the_rllm_and_asearcher_clients(served, engine):
    service, app = served(engine)
    with app:
        single = httpx.post(
            f"{app.url}/retrieve", json={"query": QUESTIONS[0], "top_k": 2}, timeout=30
        ).json()
        batch = httpx.post(f"{app.url}/retrieve", json={"queries": QUESTIONS, "topk": 2}, timeout=30).json()
        urls = [doc["url"] for docs in batch["result"] for doc in docs]
        opened = httpx.post(f"{app.url}/access", json={"urls": urls}, timeout=30).json()["result"]
    service.close()
    assert [r["document"]["id"] for r in single["results"]] == [d["id"] for d in batch["result"][0]]
    assert single["num_results"] == 2 and all(isinstance(r["score"], float) for r in single["results"])
    docs = [doc for docs in batch["result"] for doc in docs]
    for doc, view in zip(docs, opened, strict=True):
        title = doc["contents"].split("\n")[0].strip('"')
        assert view["contents"].startswith(f"# {title} (chunk ")
