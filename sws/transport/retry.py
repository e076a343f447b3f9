"""Timeouts and retries shared by the transports.

Only failures a transport classifies as transient (overload, a replica or connection lost, a timeout) are
retried, with full-jitter exponential backoff that honours the server's ``Retry-After``. Retrying them is
safe because every served tool is a read: a repeated ``search`` or ``open_url`` returns the same text.
When the attempts run out the call raises ``sws.agent.FatalToolError``: the service is down, not the
model wrong, so the agent aborts and records the episode instead of showing the model an outage.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sws.agent import FatalToolError

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying; ``retry_after_s`` is the server's hint, if any."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class RetryPolicy:
    """Per-attempt timeout, attempt count and backoff of one tool call.

    Args:
        timeout_s: seconds per attempt.
        max_attempts: attempts in all, the first included (>= 1).
        backoff_s: base of the full-jitter exponential backoff.
        backoff_max_s: cap of one wait (a longer ``Retry-After`` is cut to it).
    """

    timeout_s: float = 60.0
    max_attempts: int = 3
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s={self.timeout_s}: must be > 0")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts={self.max_attempts}: must be >= 1")
        if self.backoff_s < 0 or self.backoff_max_s < 0:
            raise ValueError(f"backoff_s={self.backoff_s}, backoff_max_s={self.backoff_max_s}: must be >= 0")

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        jitter = random.uniform(0, min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1)))
        return min(self.backoff_max_s, max(jitter, retry_after_s or 0.0))

    def run(self, what: str, attempt_fn: Callable[[], T]) -> T:
        """Call ``attempt_fn`` until it returns, retrying :class:`TransientError`."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                return attempt_fn()
            except TransientError as exc:
                if attempt == self.max_attempts:
                    raise self._gave_up(what, exc) from exc
                time.sleep(self.delay(attempt, exc.retry_after_s))
        raise AssertionError("unreachable")

    async def arun(self, what: str, attempt_fn: Callable[[], Awaitable[T]]) -> T:
        """Async :meth:`run`."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                return await attempt_fn()
            except TransientError as exc:
                if attempt == self.max_attempts:
                    raise self._gave_up(what, exc) from exc
                await asyncio.sleep(self.delay(attempt, exc.retry_after_s))
        raise AssertionError("unreachable")

    def _gave_up(self, what: str, exc: TransientError) -> FatalToolError:
        return FatalToolError(f"{what}: still failing after {self.max_attempts} attempts: {exc}")
