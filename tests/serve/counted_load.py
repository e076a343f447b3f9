"""A closed-loop load that ends by count, not by the clock, for the served tests.

``benchmarks/loadgen.py`` runs for a number of seconds, so how many requests a run holds depends on how fast
the machine is; a test of the service must not (``CONTRIBUTING.md``: no timed assertions). Here each client
sends requests back to back until a condition on its own answers holds (``per_client(n)``: n answers), so
what a test asserts about the answers holds for every speed. Each request is bounded by ``timeout_s``: a
request that never gets an answer is a ``TimeoutError`` answer, not a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Request = tuple[str, dict[str, Any] | None]  # (path, JSON body); no body: a GET


@dataclass(frozen=True)
class Answer:
    client: int
    path: str
    started: float  # time.perf_counter() when the request was sent
    status: int | None  # None: a transport error (``error`` names it)
    error: str  # "" for a 200; "HTTP 503: <body>" or "<exception type>: <message>"
    body: bytes

    @property
    def ok(self) -> bool:
        return self.status == 200


def per_client(n: int) -> Callable[[list[Answer]], bool]:
    """Each client stops after ``n`` answers."""
    return lambda mine: len(mine) >= n


def with_info(requests: Sequence[Request], every: int = 5) -> list[Request]:
    """``requests`` with a ``GET /info`` as every ``every``-th request: its answer names the replica."""
    out: list[Request] = []
    for i, request in enumerate(requests):
        out.append(request)
        if i % (every - 1) == every - 2:
            out.append(("/info", None))
    return out


def summary(answers: Sequence[Answer]) -> dict[str, Any]:
    """What an assertion message shows."""
    failed = [a for a in answers if not a.ok]
    return {
        "requests": len(answers),
        "failed": len(failed),
        "statuses": dict(Counter(str(a.status) for a in answers)),
        "error_samples": [a.error for a in failed[:5]],
    }


async def closed_loop(
    base_url: str,
    requests: Sequence[Request],
    *,
    clients: int,
    until: Callable[[list[Answer]], bool],
    token: str | None = None,
    timeout_s: float = 120.0,
    on_answer: Callable[[list[Answer]], None] | None = None,
) -> list[Answer]:
    """``clients`` clients, all started at once, client i sending ``requests[i]``, ``requests[i + 1]``, ...
    (cycling) back to back until ``until(its own answers)``; ``on_answer(every answer so far)`` runs after
    each answer. Returns every answer, in the order they came."""
    import aiohttp

    headers = {"authorization": f"Bearer {token}"} if token else {}
    answers: list[Answer] = []
    connector = aiohttp.TCPConnector(limit=clients)  # every client has its own connection: none waits here
    timeout = aiohttp.ClientTimeout(total=timeout_s)

    async def client(i: int, session: aiohttp.ClientSession) -> None:
        mine: list[Answer] = []
        k = i
        while not until(mine):
            path, body = requests[k % len(requests)]
            k += 1
            url = base_url.rstrip("/") + path
            started = time.perf_counter()
            try:
                if body is None:
                    response_cm = session.get(url, headers=headers)
                else:
                    response_cm = session.post(url, json=body, headers=headers)
                async with response_cm as response:
                    payload = await response.read()
                    status = response.status
            except (TimeoutError, aiohttp.ClientError) as exc:
                answer = Answer(i, path, started, None, f"{type(exc).__name__}: {exc}", b"")
            else:
                error = "" if status == 200 else f"HTTP {status}: {payload[:200].decode('utf-8', 'replace')}"
                answer = Answer(i, path, started, status, error, payload)
            mine.append(answer)
            answers.append(answer)
            if on_answer is not None:
                on_answer(answers)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(*(client(i, session) for i in range(clients)))
    return answers


def run_closed_loop(base_url: str, requests: Sequence[Request], **kwargs: Any) -> list[Answer]:
    """Blocking :func:`closed_loop`."""
    return asyncio.run(closed_loop(base_url, requests, **kwargs))
