"""Embedders by kind: ``make_embedder(kind, **kwargs)``; plugins add kinds with ``register_embedder``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sws.index.embedders.base import Embedder

EmbedderFactory = Callable[..., Embedder]
_FACTORIES: dict[str, EmbedderFactory] = {}


def register_embedder(kind: str, factory: EmbedderFactory) -> None:
    """Make ``kind`` available to ``make_embedder`` (the built-ins register the same way)."""
    _FACTORIES[kind] = factory


def embedder_kinds() -> list[str]:
    return sorted(_FACTORIES)


def make_embedder(kind: str, **kwargs: Any) -> Embedder:
    """Build an embedder; ``kwargs`` are the constructor's (``Embedder.spec()`` round-trips).

    Raises:
        ValueError: unknown kind.
    """
    try:
        factory = _FACTORIES[kind]
    except KeyError:
        raise ValueError(f"unknown embedder kind {kind!r} (known: {', '.join(embedder_kinds())})") from None
    return factory(**kwargs)


def _register_builtins() -> None:
    from sws.index.embedders.hashing import HashingEmbedder
    from sws.index.embedders.openai_api import OpenAIEmbedder
    from sws.index.embedders.qwen3 import Qwen3Embedder
    from sws.index.embedders.st import SentenceTransformerEmbedder

    for cls in (Qwen3Embedder, SentenceTransformerEmbedder, OpenAIEmbedder, HashingEmbedder):
        register_embedder(cls.kind, cls)


_register_builtins()
