"""The call guard: tool calls that tell the model's mistakes apart from service failures.

``WikiTools.call_tool`` turns every exception into the error observation, the backend's too. A service
must not show the model "embedding deployment unavailable" as if its arguments were wrong: it answers
503 (or raises to the handle caller) so the client retries and the episode is aborted only if the service
stays down. :class:`GuardedBackend` marks backend exceptions as :class:`BackendFailure`, and
:func:`call_tool` is ``WikiTools.call_tool`` except that it lets those through; every other outcome is
byte-identical (tests pin that).
"""

from __future__ import annotations

import random
from typing import Any

from sws.env.errors import BackendFailure
from sws.env.observations import error_observation
from sws.env.tools import WikiTools
from sws.types import Chunk, Hit, SearchBackend, is_rust_panic


class GuardedBackend:
    """A ``SearchBackend`` whose failures, every one, surface as :class:`BackendFailure` (the cause chained).

    The tools validate the model's arguments before they reach the backend (``sws.env.arguments``: lone
    surrogates replaced, methods checked), so whatever the backend raises is the service's fault: Tantivy
    raises ``ValueError`` for an unreadable index file, which the model must not be told to fix.

    Args:
        backend: the real backend (``sws.search.SearchEngine``).
    """

    def __init__(self, backend: SearchBackend):
        self.backend = backend

    def search(self, query: str, top_k: int, method: str) -> list[Hit]:
        return self._guard(self.backend.search, query, top_k, method)

    def search_titles(self, query: str, top_k: int) -> list[Hit]:
        return self._guard(self.backend.search_titles, query, top_k)

    def resolve_page(self, identifier: str) -> int | None:
        return self._guard(self.backend.resolve_page, identifier)

    def page_chunks(self, page_id: int) -> list[Chunk]:
        return self._guard(self.backend.page_chunks, page_id)

    def random_page(self, rng: random.Random) -> int | None:
        return self._guard(self.backend.random_page, rng)

    @staticmethod
    def _guard(method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except BackendFailure:
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception) and not is_rust_panic(exc):
                raise  # KeyboardInterrupt, SystemExit, cancellation
            raise BackendFailure(f"{type(exc).__name__}: {exc}") from exc


def guarded_tools(backend: SearchBackend, **options: Any) -> WikiTools:
    """``WikiTools`` over ``GuardedBackend(backend)``; ``options`` are WikiTools keyword arguments."""
    return WikiTools(GuardedBackend(backend), **options)


def call_tool(tools: WikiTools, name: str, arguments_json: str | None) -> str:
    """``tools.call_tool`` that raises :class:`BackendFailure` instead of observing it.

    Raises:
        BackendFailure: the backend failed; the caller answers 503 / retries.
    """
    tool = str(name or "").strip()
    raw = arguments_json or "{}"
    try:
        return tools.execute(tool, raw)
    except BackendFailure:
        raise
    except Exception as error:  # noqa: BLE001 - the contract: the model's mistakes become observations
        return error_observation(tool, raw if isinstance(raw, str) else repr(raw), error)
