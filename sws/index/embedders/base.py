"""The embedder interface: documents and queries in, L2-normalised float32 rows out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from sws.index.errors import EmbeddingError
from sws.manifest import digest

QWEN3_QUERY_TASK = "Given a web search query, retrieve relevant passages that answer the query"


def default_query_task(model: str) -> str:
    """The query instruction a model family expects: Qwen3-Embedding's search task, none for others."""
    return QWEN3_QUERY_TASK if "qwen3-embedding" in model.lower() else ""


def model_id(model: str) -> str:
    """A model name's or path's last component, lower-cased: the same model wherever it is loaded from."""
    return model.rstrip("/").split("/")[-1].lower()


def space_fingerprint(model: str, dim: int, query_task: str | None = None) -> str:
    """The fingerprint of an embedding space (``Embedder.fingerprint``), known without loading the model:
    its model id, dimension and query task (None: the model family's default)."""
    task = default_query_task(model) if query_task is None else query_task
    return digest({"model": model_id(model), "dim": dim, "query_task": task})


def format_query(query: str, task: str) -> str:
    """``Instruct: {task}\\nQuery: {query.strip()}`` (CONTRACT §1.7), or the stripped query when there is no task."""
    query = query.strip()
    return f"Instruct: {task}\nQuery: {query}" if task else query


def normalize_rows(vectors: Any, expected_rows: int) -> np.ndarray:
    """float32 rows scaled to unit L2 norm (norm floored at 1e-12).

    Raises:
        EmbeddingError: wrong row count, not 2-D, or NaN/Inf values.
    """
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim != 2 or out.shape[0] != expected_rows:
        raise EmbeddingError(f"embedder returned shape {out.shape}, expected ({expected_rows}, dim)")
    if not np.isfinite(out).all():
        raise EmbeddingError("embedder returned NaN or Inf values")
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class Embedder(ABC):
    """One embedding space. Subclasses implement ``dim`` and ``_embed`` (raw rows, any scale).

    The fingerprint names the space, not the transport: the same model served locally or behind
    ``/v1/embeddings`` gives the same fingerprint, so an index built with one can be queried with the other.

    Args:
        model: model name or path; its last path component, lower-cased, is the model id.
        query_task: query instruction; None picks the model family's default, "" means none.
    """

    kind: ClassVar[str]

    def __init__(self, model: str, query_task: str | None = None):
        self.model = model
        self.query_task = default_query_task(model) if query_task is None else query_task

    @property
    @abstractmethod
    def dim(self) -> int:
        """Vector dimension."""

    @abstractmethod
    def _embed(self, texts: list[str]) -> Any:
        """Raw vectors (n, dim) for the texts, in order."""

    @property
    def model_id(self) -> str:
        return model_id(self.model)

    @property
    def fingerprint(self) -> str:
        return space_fingerprint(self.model, self.dim, self.query_task)

    def spec(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this embedder through ``make_embedder`` (no secrets)."""
        return {"kind": self.kind, "model": self.model, "query_task": self.query_task}

    def runtime_info(self) -> dict[str, Any]:
        """How vectors are computed: ``runtime``, and where a model runs locally its ``precision`` and
        ``min_cosine_to_fp32`` on the agreement gate's probe texts (``sws.index.embedders.precision``)."""
        return {"runtime": self.kind}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Documents are embedded as they are, without any instruction."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize_rows(self._embed(texts), len(texts))

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Queries are stripped and, when the model has a task, wrapped in its instruction."""
        return self.embed_documents([format_query(q, self.query_task) for q in queries])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, fingerprint={self.fingerprint})"
