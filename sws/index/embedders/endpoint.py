"""An index's query embedder computed by an OpenAI-compatible ``/v1/embeddings`` endpoint, as the reference
embeds its queries (CONTRACT §1.7): the switch ``serve.embedding.endpoint`` / ``tools.embedding_endpoint``
(``--embedding-endpoint``); unset, queries are embedded locally by the manifest's embedder."""

from __future__ import annotations

from typing import Any

from sws.index.embedders.openai_api import OpenAIEmbedder

PROBE_QUERY = "ping"  # the reference's provider probe sends the same text


def endpoint_embedder(built: dict[str, Any], endpoint: str) -> OpenAIEmbedder:
    """The index's embedding space (``built``: the manifest's ``embedder``; its model name, query task and
    dimension) embedded by the server at ``endpoint``, which is asked one query now: so the fingerprint is the
    index's, and a server that is down or answers wrongly fails here rather than on a request. The bearer
    token is ``SWS_EMBEDDING_API_KEY``, if set.

    Raises:
        EmbeddingError: the endpoint is down, or answers a wrong dimension, NaN/Inf or a malformed body.
    """
    spec = dict(built["spec"])
    space = (
        spec
        if spec.pop("kind") == "openai"
        else {"model": spec["model"], "query_task": spec.get("query_task")}
    )
    embedder = OpenAIEmbedder(**space | {"base_url": endpoint, "dim": built["dim"]})
    embedder.embed_queries([PROBE_QUERY])
    return embedder
