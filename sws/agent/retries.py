"""The agent's retry policy for remote calls (LLM, tools): full-jitter exponential backoff, bounded attempts."""

from __future__ import annotations

from collections.abc import Callable

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential


class Backoff:
    """Retries of one kind of call: ``async for attempt in backoff.attempts(): with attempt: ...``.

    Args:
        is_transient: which exceptions are worth another try; others propagate at once.
        max_attempts: attempts per call, the first included.
        backoff_s: base of the backoff; waits are uniform in ``[0, min(backoff_max_s, base * 2^n)]``.
        backoff_max_s: cap of one wait.
    """

    def __init__(
        self,
        is_transient: Callable[[BaseException], bool],
        max_attempts: int,
        backoff_s: float,
        backoff_max_s: float,
    ):
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.is_transient, self.max_attempts = is_transient, max_attempts
        self._wait = wait_random_exponential(multiplier=backoff_s, max=backoff_max_s)

    def attempts(self) -> AsyncRetrying:
        """A fresh retry loop (the last error is re-raised when the attempts run out)."""
        return AsyncRetrying(
            retry=retry_if_exception(self.is_transient),
            wait=self._wait,
            stop=stop_after_attempt(self.max_attempts),
            reraise=True,
        )
