"""The tools over HTTP: ``POST {url}/call`` of the retrieval service (``serve/retrieval/app.py``).

Sync calls use one pooled ``httpx.Client``; async calls use one ``aiohttp`` session per event loop (httpx's
async pool slows down sharply beyond a few dozen concurrent requests on a small machine; aiohttp holds up,
measured in ``benchmarks/serve_http.py``).

Statuses: 200 is the observation. 400/413/415/422 mean the service rejected this call's input (e.g. a query
over its length bound): :class:`ToolRequestError` with the server's message, which the agent shows the model
as an error observation (the reference showed httpx's generic text instead). 401/403/404/405 are
configuration mistakes (token, URL): :class:`FatalToolError`. 408/429 and 5xx, connection errors and timeouts are
transient: retried, honouring ``Retry-After``.

``policy.timeout_s`` bounds each attempt as a whole, the answer's last byte included (aiohttp's ``total``; the
sync client reads the body in chunks against the deadline, each read bounded by the same timeout), so a
service that trickles its answer fails the attempt instead of holding the episode.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from typing import Any

from sws.env.errors import FatalToolError, ToolRequestError, TransientToolError
from sws.retry import RetryPolicy, parse_retry_after
from sws.transport.retries import acall_with_retries, call_with_retries

_INPUT_REJECTED = {400, 413, 415, 422}
_MISCONFIGURED = {401, 403, 404, 405}


def _error_message(status: int, body: bytes) -> str:
    try:
        error = json.loads(body)["error"]
        return f"{error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        return body[:300].decode("utf-8", "replace") or f"HTTP {status}"


def _outcome(name: str, url: str, status: int, headers: Any, body: bytes) -> str:
    """The observation for a 200, else the exception for this status."""
    if status == 200:
        try:
            return json.loads(body)["content"]
        except (ValueError, KeyError, TypeError) as exc:
            raise TransientToolError(f"malformed response from {url}: {body[:200]!r}") from exc
    message = _error_message(status, body)
    if status in _INPUT_REJECTED:
        raise ToolRequestError(message)
    if status in _MISCONFIGURED:
        raise FatalToolError(f"{name}: HTTP {status} from {url}: {message}")
    raise TransientToolError(
        f"HTTP {status} from {url}: {message}", parse_retry_after(headers.get("retry-after"))
    )


class HttpTools:
    """``call_tool`` over the service's ``POST /call``.

    Picklable: the connection pools are created again where it is unpickled.

    Args:
        url: the service root, e.g. ``http://127.0.0.1:11536`` (a route prefix included, if any).
        token: bearer token, or None.
        policy: per-attempt timeout and retries.
        max_connections: connection-pool size per process (per event loop for async calls).
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        policy: RetryPolicy | None = None,
        max_connections: int = 256,
    ):
        self.url = url.rstrip("/")
        self.token = token or None
        self.policy = policy or RetryPolicy()
        self.max_connections = max_connections
        self._client: Any = None
        self._sessions: dict[int, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"], state["_sessions"] = None, {}
        return state

    @property
    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    @staticmethod
    def _body(name: str, arguments_json: str) -> bytes:
        return json.dumps({"name": name, "arguments": arguments_json}, ensure_ascii=True).encode()

    def call_tool(self, name: str, arguments_json: str) -> str:
        return call_with_retries(
            self.policy, f"{name} at {self.url}", lambda: self._attempt(name, arguments_json)
        )

    async def acall_tool(self, name: str, arguments_json: str) -> str:
        return await acall_with_retries(
            self.policy, f"{name} at {self.url}", lambda: self._aattempt(name, arguments_json)
        )

    def _attempt(self, name: str, arguments_json: str) -> str:
        import httpx

        if self._client is None:
            limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=64)
            self._client = httpx.Client(timeout=self.policy.timeout_s, limits=limits, trust_env=False)
        deadline = time.monotonic() + self.policy.timeout_s
        try:
            with self._client.stream(
                "POST", f"{self.url}/call", content=self._body(name, arguments_json), headers=self._headers
            ) as response:
                body = self._read_by(deadline, response.iter_bytes())
        except httpx.TransportError as exc:  # connect/read/write errors and timeouts
            raise TransientToolError(f"{type(exc).__name__}: {exc}") from exc
        return _outcome(name, self.url, response.status_code, response.headers, body)

    def _read_by(self, deadline: float, chunks: Iterable[bytes]) -> bytes:
        body = bytearray()
        for chunk in chunks:
            if time.monotonic() > deadline:
                raise self._late()
            body += chunk
        return bytes(body)

    def _late(self) -> TransientToolError:
        return TransientToolError(f"no complete answer from {self.url} within {self.policy.timeout_s:g} s")

    async def _aattempt(self, name: str, arguments_json: str) -> str:
        import aiohttp

        session = self._session()
        try:
            async with session.post(
                f"{self.url}/call", data=self._body(name, arguments_json), headers=self._headers
            ) as response:
                body = await response.read()
        except TimeoutError as exc:  # the session's total timeout
            raise self._late() from exc
        except aiohttp.ClientError as exc:
            raise TransientToolError(f"{type(exc).__name__}: {exc}") from exc
        return _outcome(name, self.url, response.status, response.headers, body)

    def _session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(id(loop))
        if session is None or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_connections),
                timeout=aiohttp.ClientTimeout(total=self.policy.timeout_s),
                trust_env=False,
            )
            self._sessions[id(loop)] = session
        return session

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
