"""One OpenAI-compatible chat endpoint: a concurrency limit, a deadline per request and jittered backoff.

Requests go through ``openai.AsyncOpenAI`` (its error classes and auth) but post the body as built,
``client.post("/chat/completions", body=...)``: the SDK's per-call TypedDict transform of the whole history
cost more CPU than everything else in a round. Connections are spread over several clients of at most
``CONNECTIONS_PER_CLIENT`` each, because the HTTP pool scans all its connections on every request.

The timeout is a deadline for the whole request, the answer's last byte included (``asyncio.timeout``; the
HTTP client's own timeouts are per read, which a server sending a byte a second never trips). An answer that
is not a chat completion (HTML from a proxy, an SSE stream, no choices) raises :class:`LLMEndpointError`
naming what came instead; a 400 for a prompt over the model's context raises :class:`ContextExhaustedError`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from sws.retry import RetryPolicy

CONNECTIONS_PER_CLIENT = 32
_RETRY_STATUS = {408, 409, 429}


class LLMEndpointError(openai.OpenAIError):
    """The endpoint answered something the client cannot use: not a chat completion, or a pause it refuses.
    An ``openai.OpenAIError``, as everything the client raises about the endpoint."""


class LLMTimeoutError(LLMEndpointError):
    """No complete answer within the request's deadline (transient: retried)."""


class ContextExhaustedError(LLMEndpointError):
    """The endpoint refused the prompt as longer than the model's context (vLLM's 400 once the history passes
    ``max_model_len``): no retry can fit it, the episode ends here."""


_CONTEXT_OVERFLOW = re.compile(r"context[ _]length", re.IGNORECASE)


def is_context_overflow(exc: BaseException) -> bool:
    """A 400 about the context length: vLLM's ``This model's maximum context length is N tokens. However, your
    prompt contains M input tokens, ...`` (or ``... M characters ...``, ``Input length (M) exceeds model's
    maximum context length (N).``), OpenAI's ``context_length_exceeded``."""
    return isinstance(exc, openai.BadRequestError) and bool(_CONTEXT_OVERFLOW.search(str(exc)))


def is_transient_llm_error(exc: BaseException) -> bool:
    """Missed deadlines, connection errors, 408/409/429 and 5xx: worth another try after a pause."""
    if isinstance(exc, (LLMTimeoutError, openai.APIConnectionError)):
        return True
    return isinstance(exc, openai.APIStatusError) and (
        exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    )


def resolve_base_url(base_url: str) -> str:
    """Append ``/v1`` when missing, as the reference runner does."""
    base_url = base_url.rstrip("/")
    return base_url if base_url.endswith("/v1") else f"{base_url}/v1"


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """An endpoint and its limits, checked when made: :class:`LLMEndpoint`'s arguments (its ``Args``), typed,
    to send where the endpoint is built (an evaluation's workers)."""

    base_url: str
    api_key: str | None = None
    max_concurrency: int = 64
    timeout: float = 600.0
    max_attempts: int = 6
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_attempts < 1:
            raise ValueError(
                f"max_concurrency and max_attempts must be >= 1, got {self.max_concurrency}, {self.max_attempts}"
            )

    def endpoint(self) -> LLMEndpoint:
        return LLMEndpoint(**asdict(self))


@dataclass(slots=True)
class LLMCall:
    """A completed chat call: the response and how many attempts it took."""

    response: ChatCompletion
    attempts: int


class LLMEndpoint:
    """Chat completions against one endpoint, with at most ``max_concurrency`` requests in flight.

    Transient errors (see :func:`is_transient_llm_error`) are retried ``max_attempts - 1`` times with
    full-jitter exponential backoff, waiting at least a 429's or 503's ``Retry-After``; the SDK's own retries
    are off so the budget is explicit. Any other error, or a transient one that outlasts the retries, is
    raised; so is a ``Retry-After`` longer than ``backoff_max_s``, as :class:`LLMEndpointError`, rather than
    retrying sooner than asked. Use from one event loop.

    Args:
        base_url: OpenAI-compatible endpoint; ``/v1`` is appended if missing.
        api_key: key; None reads ``OPENAI_API_KEY``, else ``"sws"`` (local servers ignore it).
        max_concurrency: requests in flight at once (the semaphore is not held while backing off).
        timeout: seconds per request, all of it (a missed deadline is :class:`LLMTimeoutError`, retried).
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
        LLMSettings(base_url, api_key, max_concurrency, timeout, max_attempts)  # checks them
        self.base_url = resolve_base_url(base_url)
        self.max_attempts = max_attempts
        self._policy = RetryPolicy(timeout, max_attempts, backoff_s, backoff_max_s)
        self._semaphore = asyncio.Semaphore(max_concurrency)
        key = api_key or os.environ.get("OPENAI_API_KEY") or "sws"
        per_client = min(max_concurrency, CONNECTIONS_PER_CLIENT)
        limits = httpx2.Limits(max_connections=per_client, max_keepalive_connections=per_client)
        self._clients = [
            openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=key,
                timeout=None,  # the deadline of _post bounds the whole request
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=None),
            )
            for _ in range(-(-max_concurrency // per_client))
        ]
        self._load = [0] * len(self._clients)

    async def chat(self, body: dict[str, Any]) -> LLMCall:
        """POST ``body`` to ``/chat/completions`` with the limit and the retries."""
        try:
            async for attempt in self._policy.aattempts(is_transient_llm_error):
                with attempt:
                    async with self._semaphore:
                        response = await self._post(body)
        except openai.APIStatusError as exc:
            if is_context_overflow(exc):
                raise ContextExhaustedError(f"the LLM endpoint refused the prompt: {exc}") from exc
            refusal = self._policy.refusal(exc)
            if refusal is None:
                raise
            raise LLMEndpointError(
                f"the LLM endpoint answered HTTP {exc.status_code} and {refusal}: not retried sooner"
            ) from exc
        return LLMCall(response, attempt.retry_state.attempt_number)

    async def _post(self, body: dict[str, Any]) -> ChatCompletion:
        k = min(range(len(self._load)), key=self._load.__getitem__)  # < CONNECTIONS_PER_CLIENT in flight
        self._load[k] += 1
        timeout = self._policy.timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await self._clients[k].post(
                    "/chat/completions", body=body, cast_to=httpx2.Response
                )
        except TimeoutError as exc:
            raise LLMTimeoutError(f"no complete answer from {self.base_url} within {timeout:g} s") from exc
        finally:
            self._load[k] -= 1
        return _completion(response)

    async def close(self) -> None:
        for client in self._clients:
            await client.close()


def _completion(response: httpx2.Response) -> ChatCompletion:
    """The chat completion of a 2xx answer, else :class:`LLMEndpointError` saying what the endpoint sent."""
    try:
        data = json.loads(response.content)
    except ValueError:
        data = None
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    if isinstance(first, dict) and isinstance(first.get("message"), dict):
        return ChatCompletion.construct(**data)
    media_type = response.headers.get("content-type", "").split(";")[0].strip()
    if data is not None:
        what = "JSON without choices[0].message"
    elif media_type.endswith("json"):
        what = "malformed JSON"
    else:
        what = media_type or "a body without a content type"
    head = response.content[:120].decode("utf-8", "replace")
    raise LLMEndpointError(f"the LLM endpoint answered {what}, not a chat completion: {head!r}")
