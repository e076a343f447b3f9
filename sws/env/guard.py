"""The call guard: tool calls that tell the model's mistakes apart from service failures.

``WikiTools.call_tool`` turns every exception into the error observation, the backend's too. A service
must not show the model "embedding deployment unavailable" as if its arguments were wrong: it answers
503 (or raises to the handle caller) so the client retries and the episode is aborted only if the service
stays down. A tool's ``Args.parse`` is where the model's mistakes are found (lone surrogates replaced,
methods checked), so whatever its ``run`` raises is the service's fault (Tantivy raises ``ValueError`` for an
unreadable index file, which the model must not be told to fix): :func:`call_tool` is
``WikiTools.call_tool`` except that such a failure raises :class:`BackendFailure`; every other outcome is
byte-identical (tests pin that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sws.env.errors import BackendFailure
from sws.env.tools import WikiTools
from sws.types import is_rust_panic

T = TypeVar("T")


def guarded(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``; every failure (a Tantivy panic too) raises as :class:`BackendFailure`, the cause
    chained. ``KeyboardInterrupt``, ``SystemExit`` and cancellation pass."""
    try:
        return function(*args)
    except BackendFailure:
        raise
    except BaseException as exc:
        if not isinstance(exc, Exception) and not is_rust_panic(exc):
            raise
        raise BackendFailure(f"{type(exc).__name__}: {exc}") from exc


def call_tool(tools: WikiTools, name: str, arguments_json: str | None) -> str:
    """``tools.call_tool`` that raises :class:`BackendFailure` instead of observing it.

    Raises:
        BackendFailure: the backend failed; the caller answers 503 / retries.
    """
    call = tools.parse(name, arguments_json)
    return call if isinstance(call, str) else guarded(call.run, tools.backend)
