"""A small threaded HTTP server for the fetch tests: files from memory, ``Range: bytes=N-`` answered with 206,
HEAD, redirects, and failures on demand (cut a transfer once after N bytes, answer 503 a few times)."""

from __future__ import annotations

import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


@dataclass
class ServerState:
    files: dict[str, bytes] = field(default_factory=dict)  # URL path -> body
    redirects: dict[str, str] = field(default_factory=dict)  # URL path -> location
    cut_once: dict[str, int] = field(default_factory=dict)  # URL path -> bytes sent before closing, once
    fail_times: dict[str, int] = field(default_factory=dict)  # URL path -> number of 503s before serving
    served: Counter = field(default_factory=Counter)  # URL path -> body bytes written
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ranges(self, path: str) -> list[str | None]:
        return [r for m, p, r in self.requests if p == path and m == "GET"]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: ServerState

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_HEAD(self) -> None:
        self._respond(head=True)

    def do_GET(self) -> None:
        self._respond(head=False)

    def _respond(self, head: bool) -> None:
        state, path = self.state, self.path.split("?")[0]
        with state.lock:
            state.requests.append((self.command, path, self.headers.get("Range")))
            failing = state.fail_times.get(path, 0)
            if failing and not head:
                state.fail_times[path] = failing - 1
        if path in state.redirects:
            return self._send(302, b"", {"Location": state.redirects[path]}, head)
        if failing and not head:
            return self._send(503, b"busy", {"Retry-After": "0"}, head)
        if path not in state.files:
            return self._send(404, b"not found", {}, head)
        body = state.files[path]
        total = len(body)
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match:
            start = int(match[1])
            if start >= total:
                return self._send(416, b"", {"Content-Range": f"bytes */{total}"}, head)
            headers = {"Content-Range": f"bytes {start}-{total - 1}/{total}", "Accept-Ranges": "bytes"}
            return self._send(206, body[start:], headers, head, path)
        return self._send(200, body, {"Accept-Ranges": "bytes"}, head, path)

    def _send(self, status: int, body: bytes, headers: dict, head: bool, path: str | None = None) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if head:
            return
        cut = None
        if path is not None:
            with self.state.lock:
                cut = self.state.cut_once.pop(path, None)
        if cut is not None and cut < len(body):
            body = body[:cut]
            self.close_connection = True
        self.wfile.write(body)
        self.wfile.flush()
        if path is not None:
            with self.state.lock:
                self.state.served[path] += len(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up is not a server error
            super().handle_error(request, client_address)


class FileServer:
    """``with FileServer() as server:`` serves ``server.state.files`` at ``server.url`` on 127.0.0.1."""

    def __init__(self) -> None:
        self.state = ServerState()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
