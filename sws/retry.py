"""One retry policy for remote calls (the LLM endpoint, the tool service), on tenacity.

Only failures the caller classifies as transient are retried, with full-jitter exponential backoff (waits
uniform in ``[0, min(backoff_max_s, backoff_s * 2^(n-1))]``) that honours a server's ``Retry-After`` (an
exception's ``retry_after_s``), capped at ``backoff_max_s``. Anything else propagates at once.

The tool clients call :meth:`RetryPolicy.run` / :meth:`RetryPolicy.arun`: they retry
``TransientToolError``, which is safe because every served tool is a read (a repeated ``search`` or
``open_url`` returns the same text), and raise ``FatalToolError`` when the attempts run out: the service is
down, not the model wrong, so the agent aborts and records the episode instead of showing it an outage.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from sws.env.errors import FatalToolError, TransientToolError

T = TypeVar("T")
Classifier = Callable[[BaseException], bool]


def _is_transient_tool_error(exc: BaseException) -> bool:
    return isinstance(exc, TransientToolError)


@dataclass(frozen=True)
class RetryPolicy:
    """Per-attempt timeout, attempt count and backoff of one kind of remote call.

    Args:
        timeout_s: seconds per attempt (the caller applies it).
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

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        return self.delay(state.attempt_number, getattr(error, "retry_after_s", None))

    def _options(self, is_transient: Classifier) -> dict:
        return {
            "retry": retry_if_exception(is_transient),
            "wait": self._wait,
            "stop": stop_after_attempt(self.max_attempts),
            "reraise": True,
        }

    def attempts(self, is_transient: Classifier) -> Retrying:
        """A fresh retry loop, ``for attempt in policy.attempts(f): with attempt: ...``; the last error is
        re-raised when the attempts run out."""
        return Retrying(**self._options(is_transient))

    def aattempts(self, is_transient: Classifier) -> AsyncRetrying:
        """Async :meth:`attempts` (``async for``)."""
        return AsyncRetrying(**self._options(is_transient))

    def run(self, what: str, attempt_fn: Callable[[], T]) -> T:
        """Call ``attempt_fn`` until it returns, retrying ``TransientToolError``.

        Raises:
            FatalToolError: still transient after ``max_attempts`` (``what`` names the call).
        """
        try:
            for attempt in self.attempts(_is_transient_tool_error):
                with attempt:
                    result = attempt_fn()
        except TransientToolError as exc:
            raise self._gave_up(what, exc) from exc
        return result

    async def arun(self, what: str, attempt_fn: Callable[[], Awaitable[T]]) -> T:
        """Async :meth:`run`."""
        try:
            async for attempt in self.aattempts(_is_transient_tool_error):
                with attempt:
                    result = await attempt_fn()
        except TransientToolError as exc:
            raise self._gave_up(what, exc) from exc
        return result

    def _gave_up(self, what: str, exc: TransientToolError) -> FatalToolError:
        return FatalToolError(f"{what}: still failing after {self.max_attempts} attempts: {exc}")
