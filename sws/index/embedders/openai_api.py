"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, SGLang, TEI, ...)."""

from __future__ import annotations

import os
from typing import Any

import httpx
import numpy as np

from sws.index.embedders.base import Embedder
from sws.index.errors import EmbeddingError
from sws.retry import RetryPolicy

TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: the server may answer next time (network failure, timeout, overload, restart).

    Other 4xx answers (bad model name, bad input) repeat identically, so they fail at once.
    """
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in TRANSIENT_STATUS
    return isinstance(exc, httpx.TransportError)


class OpenAIEmbedder(Embedder):
    """Client for ``POST {base_url}/v1/embeddings``: batched, with timeouts and jittered retries (``sws.retry``,
    which waits out a 429's or 503's ``Retry-After`` up to the backoff cap). Rows are put in input order by
    their ``index`` (as listed when an answer has none); a wrong count or dimension, or NaN/Inf, is an
    ``EmbeddingError`` naming the URL.

    Args:
        model: the served model name (also the model id of the fingerprint, after its last "/").
        base_url: server root, with or without the trailing ``/v1``.
        api_key: bearer token; None reads ``SWS_EMBEDDING_API_KEY``.
        dim: expected dimension; None takes it from the first answer (``dim`` before any call asks once).
        dimensions: sent as ``dimensions`` (Matryoshka truncation) when set.
        batch_size: inputs per request.
        timeout_s: per-request timeout.
        max_attempts: attempts per request for transient failures.
        backoff_s: base of the jittered backoff: retry ``n`` waits at most ``backoff_s * 2^(n-1)``, and 8 s.
        query_task: see ``Embedder``.
    """

    kind = "openai"

    def __init__(
        self,
        model: str = "Qwen/Qwen3-Embedding-0.6B",
        *,
        base_url: str = "http://127.0.0.1:17000",
        api_key: str | None = None,
        dim: int | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 60.0,
        max_attempts: int = 3,
        backoff_s: float = 0.5,
        query_task: str | None = None,
    ):
        if batch_size < 1:
            raise ValueError(f"need batch_size >= 1, got {batch_size=}")
        super().__init__(model, query_task)
        root = base_url.rstrip("/")
        self.base_url = root
        self.url = f"{root}/embeddings" if root.endswith("/v1") else f"{root}/v1/embeddings"
        self.dimensions, self.batch_size, self.timeout_s = dimensions, batch_size, timeout_s
        self.max_attempts, self.backoff_s = max_attempts, backoff_s
        self._policy = RetryPolicy(timeout_s, max_attempts, backoff_s, backoff_max_s=8.0)
        key = api_key if api_key is not None else os.environ.get("SWS_EMBEDDING_API_KEY", "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, trust_env=False)
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(np.asarray(self._request(["dimension probe"])).shape[1])
        return self._dim

    def spec(self) -> dict[str, Any]:
        return super().spec() | {
            "base_url": self.base_url,
            "dim": self._dim,
            "dimensions": self.dimensions,
            "batch_size": self.batch_size,
            "timeout_s": self.timeout_s,
            "max_attempts": self.max_attempts,
            "backoff_s": self.backoff_s,
        }

    def runtime_info(self) -> dict[str, Any]:
        return {"runtime": self.kind, "endpoint": self.base_url}

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = np.concatenate(parts)
        if self._dim is None:
            self._dim = out.shape[1]
        if out.shape[1] != self._dim:
            raise EmbeddingError(f"{self.url} returned dimension {out.shape[1]}, expected {self._dim}")
        if not np.isfinite(out).all():
            raise EmbeddingError(f"{self.url} returned NaN or Inf values")
        return out

    def _request(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        try:
            out = np.asarray(
                _rows(self._policy.run(lambda: self._post(body), is_transient)["data"]), np.float32
            )
        except httpx.HTTPError as exc:
            reason = str(exc).partition("\n")[0] or type(exc).__name__  # one line (httpx adds an MDN link)
            raise EmbeddingError(f"embedding request to {self.url} failed: {reason}") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"malformed embedding response from {self.url}: {exc!r}") from exc
        if out.ndim != 2 or len(out) != len(texts):
            raise EmbeddingError(f"{self.url} returned {out.shape} for {len(texts)} inputs")
        return out

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self._client.post(self.url, json=body)
        response.raise_for_status()
        return response.json()


def _rows(data: list[dict[str, Any]]) -> list[Any]:
    """The embeddings in input order: by their ``index``, or as listed when the server leaves it out."""
    if all("index" in item for item in data):
        data = sorted(data, key=lambda item: item["index"])
    return [item["embedding"] for item in data]
