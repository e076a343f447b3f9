"""Load and faults against the real served app (short versions of the issue's acceptance runs; the full
ones, timed, are ``benchmarks/serve_load.py``): 256 concurrent clients queue without a failed request, and a
retrieval replica killed mid-load is replaced by Serve with at most 1% of requests failing, clearly, the
other replica answering meanwhile.

The loads end by count, not by the clock (``counted_load.py``), so each assertion holds at any speed: the
kill comes after a number of answers, the load ends once every client has had a number of answers to
requests sent after it, and the 1% is of a request count fixed by the test.
"""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import numpy as np
import pytest

from serve.status import serve_status
from tests.serve.cases import QUERIES
from tests.serve.conftest import TOKEN
from tests.serve.counted_load import per_client, run_closed_loop, summary, with_info
from tests.serve.haproxy_stats import server_stats

pytestmark = [pytest.mark.ray, pytest.mark.slow]
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


def _wait_full_health(server, victim: str, timeout_s: float = 300.0) -> dict:
    """Wait for Serve's replacement of ``victim``. ``timeout_s`` is a hang guard, not a measurement: the
    recovery-time goal (180 s) is ``benchmarks/serve_load.py``'s."""
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
    """256 clients at once (8 times the 2 x 32 running slots), 4 requests each: every one answered, and HAProxy
    never marked a replica down (its health checks, on new connections, are answered while the replicas are
    busy: ``serve/retrieval/app.py`` ``ASYNCIO_LOOP``)."""
    clients, each = 256, 4
    before = _times_marked_down(server)
    answers = run_closed_loop(
        server.url, _mixed_requests(engine), clients=clients, until=per_client(each), token=TOKEN
    )
    assert len(answers) == clients * each and all(a.ok for a in answers), summary(answers)
    assert _times_marked_down(server) == before


def _replica_servers(server, within_s: float = 180.0) -> dict[str, dict[str, str]]:
    """HAProxy's rows of the two replicas, once it lists both UP (a hang guard: HAProxy learns of a new
    replica at its next reload, which took over 60 s once beside an engine test on the other xdist worker)."""
    deadline = time.monotonic() + within_s
    while True:
        servers = server_stats(server.process.pid, server.ready["app"])
        replicas = {s["svname"]: s for s in servers if s["bck"] == "0"}
        if len(replicas) == 2 and all(s["status"] == "UP" for s in replicas.values()):
            return replicas
        assert time.monotonic() < deadline, servers
        time.sleep(0.5)


def _times_marked_down(server) -> dict[str, str]:
    """How often HAProxy has marked each replica down."""
    return {name: s["chkdown"] for name, s in _replica_servers(server).items()}


def test_no_request_waits_while_later_ones_are_answered(server):
    """256 keyword-search clients through HAProxy, 16 requests each: no request is overtaken by more than three
    rounds of the clients' answers (answers to requests sent after it, received before it). On uvloop
    (libuv accepts one connection per loop turn) HAProxy's new connections to a busy replica waited in its
    accept queue while the accepted ones were served again and again: some requests were overtaken by
    thousands (p99 17 s at a p50 of 0.25 s), and HAProxy's health checks, on new connections too, timed out
    (``serve/retrieval/app.py`` ``ASYNCIO_LOOP``)."""
    clients = 256
    query = json.dumps({"query": "Nosferatu silent film director", "method": "keywords"})
    answers = run_closed_loop(
        server.url,
        [("/call", {"name": "search", "arguments": query})],
        clients=clients,
        until=per_client(16),
        token=TOKEN,
    )
    assert all(a.ok for a in answers), summary(answers)
    sent = np.array([a.started for a in answers])  # in the order the answers came
    overtaken = [int((sent[:i] > sent[i]).sum()) for i in range(len(sent))]
    assert max(overtaken) < 3 * clients, sorted(overtaken)[-10:]


CLIENTS = 64  # more than one replica's 32 running slots: the survivor queues
BEFORE_KILL = 1024  # answers before the kill
AFTER_KILL = 84  # then each client goes on until this many answers to requests it sent after the kill
TOTAL_AT_LEAST = BEFORE_KILL + CLIENTS * AFTER_KILL  # 6400 = 100 x CLIENTS: 1% of it is one per client
# every failure says what happened: an HTTP error status with a body, or the transport error's name
# (a response cut after its headers fails its Content-Length check: ClientPayloadError); a TimeoutError
# (no answer in 120 s) is not among them
CLEAR = ("HTTP 5", "ClientOSError", "ServerDisconnectedError", "ClientPayloadError")


def test_killed_replica_is_replaced_under_load(server, engine):
    replicas = _replicas(server.url)
    assert len(replicas) == 2, replicas
    (victim, pid), (survivor, _) = sorted(replicas.items())
    requests = with_info(_mixed_requests(engine))  # every fifth a GET /info: it says which replica answered
    killed_at: list[float] = []

    def kill_once(answers) -> None:
        if not killed_at and len(answers) >= BEFORE_KILL:
            os.kill(pid, signal.SIGKILL)  # the replica process crashes: no drain, no goodbye
            killed_at.append(time.perf_counter())

    def enough(mine) -> bool:
        return bool(killed_at) and sum(a.started > killed_at[0] for a in mine) >= AFTER_KILL

    answers = run_closed_loop(
        server.url, requests, clients=CLIENTS, until=enough, token=TOKEN, on_answer=kill_once
    )
    report = summary(answers)
    assert len(answers) >= TOTAL_AT_LEAST, report  # by construction: the 1% below is of at least this many
    failed = [a for a in answers if not a.ok]
    assert len(failed) <= 0.01 * len(answers), report
    for answer in failed:
        assert answer.error.startswith(CLEAR), answer.error
    # requests sent after the kill were answered by the survivor (and, once up, the replacement), never by
    # the victim: the kill took, and the other replica kept answering
    sent_after = [a for a in answers if a.started > killed_at[0]]
    after = {json.loads(a.body)["replica"] for a in sent_after if a.ok and a.path == "/info"}
    assert survivor in after and victim not in after, (victim, survivor, after)
    _wait_full_health(server, victim)
