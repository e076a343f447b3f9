"""The remote clients' retries: ``TransientToolError`` is retried under the client's ``RetryPolicy``; one that
outlasts it is the service being down, not the model wrong: ``FatalToolError``, so the agent aborts and
records the episode instead of showing it an outage. Safe because every served tool is a read (a repeated
``search`` or ``open_url`` returns the same text)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sws.env.errors import FatalToolError, TransientToolError
from sws.retry import RetryPolicy

T = TypeVar("T")


def is_transient_tool_error(exc: BaseException) -> bool:
    return isinstance(exc, TransientToolError)


def call_with_retries(policy: RetryPolicy, what: str, attempt_fn: Callable[[], T]) -> T:
    """``attempt_fn()`` retried on ``TransientToolError``.

    Raises:
        FatalToolError: still transient when the policy is spent (``what`` names the call).
    """
    try:
        return policy.run(attempt_fn, is_transient_tool_error)
    except TransientToolError as exc:
        raise _gave_up(policy, what, exc) from exc


async def acall_with_retries(policy: RetryPolicy, what: str, attempt_fn: Callable[[], Awaitable[T]]) -> T:
    """Async :func:`call_with_retries`."""
    try:
        return await policy.arun(attempt_fn, is_transient_tool_error)
    except TransientToolError as exc:
        raise _gave_up(policy, what, exc) from exc


def _gave_up(policy: RetryPolicy, what: str, exc: TransientToolError) -> FatalToolError:
    refusal = policy.refusal(exc)
    if refusal:
        return FatalToolError(f"{what}: {exc}; the service {refusal}: not retried sooner")
    return FatalToolError(f"{what}: still failing after {policy.max_attempts} attempts: {exc}")
