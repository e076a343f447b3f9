"""Slowloris against ``sws serve`` at its default bounds, in both ingress modes (the package's shared servers): 5 000
connections from one address (127.0.0.2) each send a partial ``POST /search`` (headers, or a body, one line
every 5 s), and meanwhile a search from another address (127.0.0.1) is answered; each slow connection is
dropped by the server (refused at once beyond ``max_connections_per_source``, 408 after
``request_read_timeout_s``); an MCP ``GET /mcp`` stream opened before them outlives them all."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
from collections import Counter

import httpx
import pytest

from sws.config import ServeConfig

pytestmark = [pytest.mark.ray, pytest.mark.slow]
SLOW_CLIENTS = 5_000
TRICKLES = 24  # lines each slow client sends at most, every TRICKLE_S: its bounded life (120 s)
TRICKLE_S = 5.0
GUARD_S = 60.0  # hang guard of a connect, and of the probe search
PROBE = {"query": "history of Sudan", "top_k": 3, "method": "keywords"}


def raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.fail(f"{SLOW_CLIENTS} slow clients need {needed} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


async def slow_client(port: int, i: int, connected: asyncio.Semaphore) -> str:
    """One slowloris connection from 127.0.0.2 (``connected`` released once it is connected or refused):
    ``refused`` (closed or reset without an answer), the status line the server answered with, or ``held``
    if it was still open after its last line."""
    head = f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    body = i % 10 == 0  # every tenth one sends whole headers, then trickles the body
    first = head + 'Content-Length: 1000\r\n\r\n{"query": "' if body else head
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0)), GUARD_S
        )
    except OSError:
        return "refused"
    finally:
        connected.release()
    try:
        writer.write(first.encode())
        for line in range(TRICKLES):
            try:
                answer = await asyncio.wait_for(reader.read(200), TRICKLE_S)
            except TimeoutError:
                writer.write(b"a" if body else f"X-Slow-{line}: {i}\r\n".encode())
                continue
            return answer.split(b"\r\n")[0].decode() if answer else "refused"
        return "held"
    except OSError:
        return "refused"
    finally:
        writer.close()


def auth(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


def open_mcp_stream(port: int, token: str | None) -> socket.socket:
    stream = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
    head = {"Host": f"127.0.0.1:{port}", "Accept": "text/event-stream", **auth(token)}
    lines = "".join(f"{name}: {value}\r\n" for name, value in head.items())
    stream.sendall(f"GET /mcp HTTP/1.1\r\n{lines}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head and (chunk := stream.recv(4096)):
        head += chunk
    assert head.startswith(b"HTTP/1.1 200 "), head
    return stream


def still_open(stream: socket.socket) -> bool:
    stream.setblocking(False)
    try:
        return stream.recv(4096) != b""
    except BlockingIOError:  # nothing to read, not closed
        return True


async def attack_and_probe(url: str, port: int, token: str | None) -> tuple[Counter[str], httpx.Response]:
    """The slow clients' outcomes, and the answer to a search sent once they have all connected."""
    connected = asyncio.Semaphore(0)
    clients = [asyncio.create_task(slow_client(port, i, connected)) for i in range(SLOW_CLIENTS)]
    for _ in clients:
        await connected.acquire()
    async with httpx.AsyncClient(timeout=GUARD_S, trust_env=False) as client:
        probe = await client.post(f"{url}/search", json=PROBE, headers=auth(token))
    return Counter(await asyncio.gather(*clients)), probe


@pytest.fixture(params=["haproxy", "proxy"])
def slow_target(request):
    """``sws serve`` in each ingress mode: the package's ``server`` (HAProxy, a token) and ``proxy_server``."""
    return request.getfixturevalue("server" if request.param == "haproxy" else "proxy_server")


def test_slow_clients_are_dropped_and_searches_answered(slow_target, local_tools):
    raise_fd_limit(SLOW_CLIENTS + 1024)
    server = slow_target
    stream = open_mcp_stream(server.port, server.token)
    try:
        outcomes, probe = asyncio.run(attack_and_probe(server.url, server.port, server.token))
        stream_open = still_open(stream)
    finally:
        stream.close()
    assert probe.status_code == 200, probe.text
    assert probe.json()["content"] == local_tools.call_tool("search", json.dumps(PROBE))
    cap = ServeConfig().max_connections_per_source
    # uvicorn's status line, and HAProxy's
    timed_out = outcomes["HTTP/1.1 408 Request Timeout"] + outcomes["HTTP/1.1 408 Request Time-out"]
    assert outcomes["refused"] + timed_out == SLOW_CLIENTS, outcomes  # none held, none answered otherwise
    # the rest were refused at once; HAProxy's threads each admit connections before they see the others'
    assert 0 < timed_out <= 2 * cap, outcomes
    assert stream_open  # past request_read_timeout_s: only requests are bounded, not responses
