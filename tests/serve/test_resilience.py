"""Load and faults against the real served app (short versions of the issue's acceptance runs; the full
ones are ``benchmarks/serve_load.py``): 256 concurrent clients queue without a failed request, and a
retrieval replica killed mid-load is replaced by Serve with at most 1% of requests failing, clearly."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import httpx
import pytest

from serve.launch import serve_status
from tests.benchmarks.conftest import bench_module
from tests.serve.cases import QUERIES
from tests.serve.conftest import TOKEN

pytestmark = [pytest.mark.ray, pytest.mark.slow]
load = bench_module("loadgen").load  # the benchmarks' load generator
AUTH = {"authorization": f"Bearer {TOKEN}"}


def _mixed_requests(engine) -> list[tuple[str, dict]]:
    """What agents send: searches of every method and chunk opens."""
    page = engine.resolve_page("Emmanuel Olisadebe")
    requests = []
    for i, query in enumerate(QUERIES * 4):
        method = ("rrf", "keywords", "vector", "rrf")[i % 4]
        arguments = {"query": f"{query} {i}", "top_k": 10, "method": method}
        requests.append(("/call", {"name": "search", "arguments": json.dumps(arguments)}))
        url = f"https://en.wikipedia.org/wiki/{page}#chunk-{1 + i % 3}"
        requests.append(("/call", {"name": "open_url", "arguments": json.dumps({"url": url})}))
    return requests


def _replicas(url: str, want: int = 2, tries: int = 200) -> dict[str, int]:
    """``{replica id: pid}`` seen through ``/info`` (HAProxy spreads requests over the replicas)."""
    seen: dict[str, int] = {}
    with httpx.Client(timeout=30, trust_env=False) as client:
        for _ in range(tries):
            info = client.get(f"{url}/info", headers=AUTH).json()
            seen[info["replica"]] = info["pid"]
            if len(seen) >= want:
                break
    return seen


def _wait_full_health(server, victim: str, timeout_s: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout_s
    status: dict = {}
    while time.monotonic() < deadline:
        status = serve_status(server.ready["ray_address"])
        ingress = status["sws"]["deployments"]["RetrievalIngress"]
        if status["sws"]["status"] == "RUNNING" and ingress["replicas"] == {"RUNNING": 2}:
            replicas = _replicas(server.url)
            if len(replicas) == 2 and victim not in replicas:
                return status
        time.sleep(1.0)
    raise AssertionError(f"not back to 2 healthy replicas in {timeout_s} s: {status}")


def test_256_clients_queue_without_failures(server, engine):
    result = load(server.url, _mixed_requests(engine), clients=256, seconds=10.0, token=TOKEN, timeout_s=120)
    summary = result.summary()
    assert result.failed == 0, summary
    assert result.requests > 256, summary


def test_killed_replica_is_replaced_under_load(server, engine):
    replicas = _replicas(server.url)
    assert len(replicas) == 2, replicas
    victim, pid = min(replicas.items())
    outcome = {}

    def run_load():
        outcome["result"] = load(server.url, _mixed_requests(engine), clients=64, seconds=12.0, token=TOKEN)

    thread = threading.Thread(target=run_load)
    thread.start()
    time.sleep(3.0)
    os.kill(pid, signal.SIGKILL)  # the replica process crashes: no drain, no goodbye
    thread.join()
    result = outcome["result"]
    summary = result.summary()
    assert result.requests > 200, summary
    assert result.failed <= 0.01 * result.requests, summary
    # every failure says what happened: an HTTP error status with a body, or the transport error's name
    # (a response cut after its headers fails its Content-Length check: ClientPayloadError)
    clear = ("HTTP 5", "ClientOSError", "ServerDisconnectedError", "ClientPayloadError")
    for sample in result.error_samples:
        assert sample.startswith(clear), sample
    after_kill = [status for t, status in result.timeline if t > 4.5]
    assert after_kill.count(200) > 50, summary  # the surviving replica kept answering
    _wait_full_health(server, victim)
