"""One OpenAI-compatible chat endpoint: a concurrency limit, timeouts and jittered exponential backoff."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_random_exponential

_RETRY_STATUS = {408, 409, 429}


def is_transient_llm_error(exc: BaseException) -> bool:
    """Timeouts, connection errors, 408/409/429 and 5xx: worth another try after a pause."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code in _RETRY_STATUS or exc.status_code >= 500)


def resolve_base_url(base_url: str) -> str:
    """Append ``/v1`` when missing, as the reference runner does."""
    base_url = base_url.rstrip("/")
    return base_url if base_url.endswith("/v1") else f"{base_url}/v1"


@dataclass(slots=True)
class LLMCall:
    """A completed chat call: the response and how many attempts it took."""

    response: ChatCompletion
    attempts: int


class LLMEndpoint:
    """Chat completions against one endpoint, with at most ``max_concurrency`` requests in flight.

    Transient errors (see :func:`is_transient_llm_error`) are retried ``max_attempts - 1`` times with
    full-jitter exponential backoff; the SDK's own retries are off so the budget is explicit. Any other error,
    or a transient one that outlasts the retries, is raised. Use from one event loop.

    Args:
        base_url: OpenAI-compatible endpoint; ``/v1`` is appended if missing.
        api_key: key; None reads ``OPENAI_API_KEY``, else ``"sws"`` (local servers ignore it).
        max_concurrency: requests in flight at once (the semaphore is not held while backing off).
        timeout: seconds per request.
        max_attempts: attempts per call, the first included.
        backoff_s: base of the exponential backoff; waits are uniform in ``[0, min(backoff_max_s, base * 2^n)]``.
        backoff_max_s: cap of one wait.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        max_concurrency: int = 64,
        timeout: float = 600.0,
        max_attempts: int = 6,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
    ):
        if max_concurrency < 1 or max_attempts < 1:
            raise ValueError(f"max_concurrency and max_attempts must be >= 1, got {max_concurrency}, {max_attempts}")
        self.base_url = resolve_base_url(base_url)
        self.max_attempts = max_attempts
        self._wait = wait_random_exponential(multiplier=backoff_s, max=backoff_max_s)
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "sws",
            timeout=timeout,
            max_retries=0,
        )

    async def chat(self, **body: Any) -> LLMCall:
        """``chat.completions.create(**body)`` with the limit and the retries."""
        retrying = AsyncRetrying(
            retry=retry_if_exception(is_transient_llm_error),
            wait=self._wait,
            stop=stop_after_attempt(self.max_attempts),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                async with self._semaphore:
                    response = await self._client.chat.completions.create(**body)
        return LLMCall(response, attempt.retry_state.attempt_number)

    async def close(self) -> None:
        await self._client.close()
