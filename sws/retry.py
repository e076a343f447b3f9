"""One retry policy for every remote call (the LLM endpoint, the tool service, embeddings, downloads), on
tenacity.

Only failures the caller classifies as transient are retried, with full-jitter exponential backoff (waits
uniform in ``[0, min(backoff_max_s, backoff_s * 2^(n-1))]``) that honours a server's ``Retry-After`` (an
exception's ``retry_after_s``, else its ``response``'s header): the wait is at least that long. A server that
asks for more than ``backoff_max_s`` is not retried sooner than it asked: the call fails at once (see
:meth:`RetryPolicy.refusal`). Anything else propagates at once, and so does the last transient failure when
the attempts run out: what that means (a fatal tool error, a failed download) is the caller's to say.

``timeout_s`` is each attempt's deadline, which the callers apply: the LLM and tool clients to the whole
answer (connecting, sending and reading it: a server that answers a byte at a time fails the attempt like one
that never answers), the fetcher to each read of a download (gigabytes have no whole-answer deadline).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception

T = TypeVar("T")
Classifier = Callable[[BaseException], bool]
# before each wait: (the failed attempt's error, its number, the seconds about to be waited)
RetryHook = Callable[[BaseException, int, float], None]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (a number of seconds or an HTTP date); None if absent or invalid."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def retry_after_s(exc: BaseException | None) -> float | None:
    """The pause a failed call's server asked for: ``exc.retry_after_s``, else the ``Retry-After`` header of
    ``exc.response`` (the LLM SDK's and httpx's status errors); None if it asked for none."""
    value = getattr(exc, "retry_after_s", None)
    if value is not None:
        return value
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return parse_retry_after(headers.get("retry-after")) if headers is not None else None


@dataclass(frozen=True)
class RetryPolicy:
    """Per-attempt deadline, attempt count and backoff of one kind of remote call.

    Args:
        timeout_s: seconds of one attempt (the caller applies it; see the module docstring).
        max_attempts: attempts in all, the first included (>= 1).
        backoff_s: base of the full-jitter exponential backoff.
        backoff_max_s: cap of one wait; a server asking for a longer ``Retry-After`` is not retried.
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
        """Seconds to wait after failed attempt ``attempt`` (1-based): the jittered backoff, or the server's
        ``Retry-After`` if longer."""
        jitter = random.uniform(0, min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1)))
        return max(jitter, retry_after_s or 0.0)

    def refusal(self, exc: BaseException | None) -> str | None:
        """Why ``exc`` is not retried although transient: its server asked for a longer pause than
        ``backoff_max_s`` (retrying sooner would only be refused again); None when it may be retried."""
        wait = retry_after_s(exc)
        if wait is None or wait <= self.backoff_max_s:
            return None
        return f"asked to retry after {wait:g} s, more than the backoff cap of {self.backoff_max_s:g} s"

    def _wait(self, state: RetryCallState) -> float:
        return self.delay(state.attempt_number, retry_after_s(_error(state)))

    def _stop(self, state: RetryCallState) -> bool:
        return state.attempt_number >= self.max_attempts or self.refusal(_error(state)) is not None

    def _options(self, is_transient: Classifier, on_retry: RetryHook | None) -> dict:
        options = {"retry": retry_if_exception(is_transient), "wait": self._wait, "stop": self._stop}
        if on_retry is not None:
            options["before_sleep"] = lambda state: on_retry(
                _error(state), state.attempt_number, state.upcoming_sleep
            )
        return options | {"reraise": True}

    def attempts(self, is_transient: Classifier, on_retry: RetryHook | None = None) -> Retrying:
        """A fresh retry loop, ``for attempt in policy.attempts(f): with attempt: ...``; the last error is
        re-raised when it is not transient (``is_transient``), the attempts run out, or its server asks for
        too long a pause (:meth:`refusal`). ``on_retry`` is called before each wait."""
        return Retrying(**self._options(is_transient, on_retry))

    def aattempts(self, is_transient: Classifier, on_retry: RetryHook | None = None) -> AsyncRetrying:
        """Async :meth:`attempts` (``async for``)."""
        return AsyncRetrying(**self._options(is_transient, on_retry))

    def run(
        self, attempt_fn: Callable[[], T], is_transient: Classifier, on_retry: RetryHook | None = None
    ) -> T:
        """``attempt_fn()`` under :meth:`attempts`: its result, or its last error."""
        for attempt in self.attempts(is_transient, on_retry):
            with attempt:
                result = attempt_fn()
        return result

    async def arun(
        self,
        attempt_fn: Callable[[], Awaitable[T]],
        is_transient: Classifier,
        on_retry: RetryHook | None = None,
    ) -> T:
        """Async :meth:`run` (``attempt_fn`` returns the awaitable of one attempt)."""
        async for attempt in self.aattempts(is_transient, on_retry):
            with attempt:
                result = await attempt_fn()
        return result


def _error(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome else None
