"""Bounds on what one HTTP client holds in the uvicorn servers Ray Serve starts (its Python proxy, and each
replica's own server, which HAProxy forwards to): every request is read whole within
``SWS_SERVE_READ_TIMEOUT_S`` (else 408 and the connection is closed), and a client address has at most
``SWS_SERVE_MAX_CONNECTIONS_PER_SOURCE`` connections open (0: no bound; more are closed at once).

Each accepted connection also gets ``TCP_NODELAY``: Ray makes its listening sockets with protocol 0, for
which asyncio's own event loop leaves Nagle's algorithm on (uvloop sets it whatever the protocol), and then
a response's body waits for the client's delayed ACK of its headers: 44 ms a request on 127.0.0.1.

uvicorn has neither: it waits for a request's headers as long as the client keeps sending, so clients that
send a header line every few seconds hold their connections for good (slowloris). Ray 2.60 starts these
servers itself, with no setting for either; it calls ``install``
(``RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH``, set by ``serve.launch.prepare_local_env``) in each of those
processes before it starts one, and ``install`` makes ``BoundedHTTPProtocol`` uvicorn's ``auto`` protocol
there. HAProxy's bounds: ``serve/haproxy_exec.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections import Counter
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

CALLBACK_ENV = "RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"
READ_TIMEOUT_ENV = "SWS_SERVE_READ_TIMEOUT_S"
PER_SOURCE_ENV = "SWS_SERVE_MAX_CONNECTIONS_PER_SOURCE"


def bounds_env(read_timeout_s: float, max_per_source: int) -> dict[str, str]:
    """The environment a Ray must start with for its Serve HTTP servers to have these bounds."""
    return {
        CALLBACK_ENV: f"{__name__}:install",
        READ_TIMEOUT_ENV: str(read_timeout_s),
        PER_SOURCE_ENV: str(max_per_source),
    }


def install() -> None:
    """Ray's HTTP-proxy callback: the bounds from the environment (none where it has none: a Ray that
    ``sws serve`` did not start), ``BoundedHTTPProtocol`` as uvicorn's ``auto`` protocol in this process; no
    middleware. The retrieval replicas also call it as they start, before Serve starts their HTTP server."""
    from uvicorn import config

    BoundedHTTPProtocol.read_timeout_s = float(os.environ.get(READ_TIMEOUT_ENV, "0"))
    BoundedHTTPProtocol.max_per_source = int(os.environ.get(PER_SOURCE_ENV, "0"))
    config.HTTP_PROTOCOLS["auto"] = f"{__name__}:BoundedHTTPProtocol"


def timeout_body(read_timeout_s: float) -> str:
    """The body of the 408 a client too slow to send its request gets (the service's JSON error shape)."""
    message = f"no complete request within {read_timeout_s:g} s"
    return json.dumps({"error": {"status": 408, "code": "request_timeout", "message": message}})


def _timeout_response(read_timeout_s: float) -> bytes:
    body = timeout_body(read_timeout_s).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class BoundedHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on reading each request (from the connection's start or
    the request's first byte to its last; an idle keep-alive connection is uvicorn's ``timeout_keep_alive``)
    and a cap on the connections open per client address; every connection ``TCP_NODELAY``."""

    read_timeout_s: ClassVar[float] = 0.0  # 0: no deadline
    max_per_source: ClassVar[int] = 0
    open_per_source: ClassVar[Counter[str]] = Counter()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_headers = True
        self._source: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        source = self.client[0] if self.client and self.max_per_source else None
        if source is not None:
            if self.open_per_source[source] >= self.max_per_source:
                transport.close()
                return
            self._source = source
            self.open_per_source[source] += 1
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._source is not None:
            self.open_per_source[self._source] -= 1
            if not self.open_per_source[self._source]:
                del self.open_per_source[self._source]
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._reading_headers = True
        self._arm()

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def _arm(self) -> None:
        if self.read_timeout_s and self._deadline is None:
            self._deadline = self.loop.call_later(self.read_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        cycle = None if self._reading_headers else self.cycle
        if cycle is None or not cycle.response_started:
            self.transport.write(_timeout_response(self.read_timeout_s))
        if cycle is not None:  # the app waiting for the rest of the body sees the client gone
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()
