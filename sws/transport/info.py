"""What the retrieval service says of itself (``GET {url}/info``): the environment fingerprint an evaluation
records and checks, and how it embeds queries."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


class ServiceRefusedError(Exception):
    """The service refused the request (HTTP 401/403: the token, the Host): its tool calls would be refused
    too. ``status``: the HTTP status; the message names the URL and the service's reason."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def service_info(url: str, token: str | None, timeout_s: float) -> tuple[str, dict[str, Any] | None]:
    """(what went wrong, None) or ("", the ``/info`` body, which has a fingerprint) from the service at ``url``,
    asked with the bearer ``token`` as the tool client sends it, within ``timeout_s`` in all.

    Raises:
        ServiceRefusedError: HTTP 401 or 403.
    """
    url = f"{url.rstrip('/')}/info"
    headers = {"authorization": f"Bearer {token}"} if token else {}

    async def get() -> httpx.Response:  # within timeout_s in all, however slowly the body trickles
        async with httpx.AsyncClient(trust_env=False) as client:
            return await asyncio.wait_for(client.get(url, headers=headers), timeout_s)

    try:
        response = asyncio.run(get())
    except TimeoutError:
        return f"no complete answer from {url} within {timeout_s:g} s", None
    except httpx.HTTPError as exc:
        return f"cannot reach {url} ({type(exc).__name__}: {exc})", None
    if response.status_code in (401, 403):
        raise ServiceRefusedError(
            f"{url} answered HTTP {response.status_code} ({_refusal(response)})", response.status_code
        )
    try:
        info = response.json() if response.status_code == 200 else None
    except ValueError:  # not JSON
        info = None
    if fingerprint_in(info):
        return "", info
    return f"{url} answered HTTP {response.status_code} without an environment fingerprint", None


def fingerprint_in(info: Any) -> str | None:
    """``fingerprint`` or ``index.fingerprint`` of an ``/info`` body, when it is a non-empty string."""
    for holder in (info, info.get("index") if isinstance(info, dict) else None):
        value = holder.get("fingerprint") if isinstance(holder, dict) else None
        if isinstance(value, str) and value:
            return value
    return None


def _refusal(response: httpx.Response) -> str:
    """The service's reason, from its JSON error body (``{"error": {"message": …}}``) or its text."""
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text.strip()[:200] or response.reason_phrase
