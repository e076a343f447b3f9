"""A small closed-loop HTTP load generator (aiohttp) for the retrieval service's tests and benchmarks.

``clients`` coroutines each send requests back to back for ``seconds``; latencies, statuses and transport
errors are counted. aiohttp, not httpx: on a 2-core machine httpx's async pool itself tops out around
160 requests/s at 64 concurrent requests, aiohttp stays above 4 000.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Request = tuple[str, dict[str, Any]]  # (path, JSON body)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


@dataclass
class LoadResult:
    """Outcome of one load run; ``failed`` counts non-200 answers and transport errors."""

    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    transport_errors: Counter = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    # (seconds since start when sent, status or -1, latency in seconds or None for a transport error)
    timeline: list[tuple[float, int, float | None]] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(self.statuses.values()) + sum(self.transport_errors.values())

    @property
    def failed(self) -> int:
        return self.requests - self.statuses.get(200, 0)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies)
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 2),
            "requests": self.requests,
            "qps": round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(percentile(lat, 0.50) * 1e3, 2),
            "p99_ms": round(percentile(lat, 0.99) * 1e3, 2),
            "failed": self.failed,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "transport_errors": dict(self.transport_errors),
            "error_samples": self.error_samples[:5],
        }


async def run_load(
    base_url: str,
    requests: Sequence[Request],
    *,
    clients: int,
    seconds: float,
    token: str | None = None,
    timeout_s: float = 120.0,
    on_tick: Callable[[float], None] | None = None,
) -> LoadResult:
    """``clients`` closed-loop clients cycling through ``requests`` (client i starts at request i)."""
    import aiohttp

    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    bodies = [(base_url.rstrip("/") + path, json.dumps(body).encode()) for path, body in requests]
    result = LoadResult(clients, 0.0)
    connector = aiohttp.TCPConnector(limit=clients, force_close=False)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    start = time.perf_counter()
    deadline = start + seconds

    async def client(i: int, session: aiohttp.ClientSession) -> None:
        n = i
        while time.perf_counter() < deadline:
            url, body = bodies[n % len(bodies)]
            n += clients
            t0 = time.perf_counter()
            try:
                async with session.post(url, data=body, headers=headers) as response:
                    payload = await response.read()
                    status = response.status
            except (TimeoutError, aiohttp.ClientError) as exc:
                result.transport_errors[type(exc).__name__] += 1
                result.timeline.append((t0 - start, -1, None))
                if len(result.error_samples) < 20:
                    result.error_samples.append(f"{type(exc).__name__}: {exc}")
                continue
            latency = time.perf_counter() - t0
            result.latencies.append(latency)
            result.statuses[status] += 1
            result.timeline.append((t0 - start, status, latency))
            if status != 200 and len(result.error_samples) < 20:
                result.error_samples.append(f"HTTP {status}: {payload[:200].decode('utf-8', 'replace')}")

    async def ticker() -> None:
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.5)
            on_tick(time.perf_counter() - start)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [client(i, session) for i in range(clients)]
        if on_tick is not None:
            tasks.append(ticker())
        await asyncio.gather(*tasks)
    result.seconds = time.perf_counter() - start
    return result


def load(base_url: str, requests: Sequence[Request], **kwargs: Any) -> LoadResult:
    """Blocking :func:`run_load`."""
    return asyncio.run(run_load(base_url, requests, **kwargs))
