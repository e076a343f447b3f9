"""The bounds ``serve.client_bounds`` puts on uvicorn (as Ray's HTTP-proxy callback installs them): a request
not read whole in time gets 408 and is closed, headers or body; a response that takes longer is not cut; a
client address beyond its connection cap is closed at once while others are answered. Real uvicorn on
127.0.0.1, raw sockets."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import uvicorn

from serve.client_bounds import BoundedHTTPProtocol, bounds_env, install
from tests.ui.helpers import ServedApp

GUARD_S = 30.0  # hang guard of every socket read


async def app(scope, receive, send):
    """Answers ``ok <body length>``; ``/stream`` answers in two parts, 2.5 s apart."""
    if scope["type"] != "http":
        return
    size = 0
    while (message := await receive())["type"] == "http.request":
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    else:
        return  # the client went away
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    if scope["path"] == "/stream":
        await send({"type": "http.response.body", "body": b"first ", "more_body": True})
        await asyncio.sleep(2.5)
    await send({"type": "http.response.body", "body": b"ok %d" % size})


@pytest.fixture
def bounded(monkeypatch):
    """``serve(read_timeout_s, max_per_source)``: ``app`` on uvicorn with the protocol ``install`` sets up."""

    def serve(read_timeout_s: float, max_per_source: int, loop: str = "auto") -> ServedApp:
        for name, value in bounds_env(read_timeout_s, max_per_source).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setitem(uvicorn.config.HTTP_PROTOCOLS, "auto", uvicorn.config.HTTP_PROTOCOLS["auto"])
        for name in ("read_timeout_s", "max_per_source"):
            monkeypatch.setattr(BoundedHTTPProtocol, name, getattr(BoundedHTTPProtocol, name))
        install()
        return ServedApp(app, loop=loop)

    return serve


def connect(served: ServedApp, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", served.port), timeout=GUARD_S, source_address=(source, 0))


def request(served: ServedApp, raw: bytes, source: str = "127.0.0.1") -> bytes:
    """What the server answers ``raw`` with until it closes the connection (b"": closed without a word)."""
    chunks = []
    with connect(served, source) as sock:
        try:
            sock.sendall(raw)
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, BrokenPipeError):
            pass
    return b"".join(chunks)


def test_a_request_not_read_in_time_gets_408_and_is_closed(bounded):
    with bounded(1.0, 0) as served:
        slow_headers = request(served, b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        slow_body = request(
            served, b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
        )
        silent = request(served, b"")
        whole = request(
            served, b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        )
        slow_response = request(served, b"GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    for refused in (slow_headers, slow_body, silent):
        head, _, body = refused.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 ") and b"connection: close" in head, refused
        assert json.loads(body)["error"] == {
            "status": 408,
            "code": "request_timeout",
            "message": "no complete request within 1 s",
        }
    assert whole.startswith(b"HTTP/1.1 200 ") and b"ok 2" in whole, whole
    assert slow_response.startswith(b"HTTP/1.1 200 ") and slow_response.endswith(b"ok 0\r\n0\r\n\r\n"), (
        slow_response
    )


def test_connections_beyond_the_cap_of_an_address_are_closed_at_once(bounded):
    hello = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    with bounded(60.0, 3) as served:
        held = [connect(served, "127.0.0.2") for _ in range(3)]
        try:
            beyond = request(served, hello, "127.0.0.2")
            other = request(served, hello, "127.0.0.1")
            held.pop().close()
            for _ in range(100):  # the server sees the close soon; then the address has a slot again
                if (again := request(served, hello, "127.0.0.2")).startswith(b"HTTP/1.1 200 "):
                    break
        finally:
            for sock in held:
                sock.close()
    assert beyond == b""  # closed without an answer
    assert other.startswith(b"HTTP/1.1 200 ") and again.startswith(b"HTTP/1.1 200 "), (other, again)
    assert BoundedHTTPProtocol.open_per_source == {}  # every connection counted out


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_every_connection_has_nagle_off(bounded, monkeypatch, loop):
    """On a socket made as Ray makes its servers' (protocol 0), asyncio's loop leaves Nagle's algorithm on:
    a response's body then waits ~40 ms for the client's delayed ACK of its headers."""
    nodelay = []
    made = BoundedHTTPProtocol.connection_made

    def recording(self, transport):
        made(self, transport)
        sock = transport.get_extra_info("socket")
        nodelay.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(BoundedHTTPProtocol, "connection_made", recording)
    hello = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    with bounded(60.0, 0, loop=loop) as served:
        answers = [request(served, hello) for _ in range(3)]
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers), answers
    assert nodelay == [1, 1, 1]


def test_without_environment_no_bounds(monkeypatch):
    """A Ray that ``sws serve`` did not start (the replicas install the protocol themselves): no deadline,
    no cap."""
    for name in bounds_env(1.0, 1):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(uvicorn.config.HTTP_PROTOCOLS, "auto", uvicorn.config.HTTP_PROTOCOLS["auto"])
    for name in ("read_timeout_s", "max_per_source"):
        monkeypatch.setattr(BoundedHTTPProtocol, name, 5)
    install()
    assert uvicorn.config.HTTP_PROTOCOLS["auto"] == "serve.client_bounds:BoundedHTTPProtocol"
    assert (BoundedHTTPProtocol.read_timeout_s, BoundedHTTPProtocol.max_per_source) == (0.0, 0)
