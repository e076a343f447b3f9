"""Query embeddings for the retrieval app: the ``QueryEmbedder`` deployment (dynamic batches, on a GPU when
there is one), the ingress side's ``HandleEmbedder`` that asks it, and the :class:`RequestCoalescer` that
sends a replica's concurrent queries in one handle call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
from ray import serve

from serve.grpc_binding import bind_replica_grpc_to_node_ip
from sws.index.embedders import QUERY_RUNTIMES as RUNTIMES
from sws.index.embedders import Embedder


class RequestCoalescer:
    """Turns concurrent one-item calls into list calls: at most ``max_in_flight`` lists are on their way,
    and items arriving meanwhile go out together in the next one when a list returns. An item that finds a
    slot free waits up to ``linger_s`` for company (0: a lone item leaves at once).

    Each handle call costs about a millisecond of Python on both sides on a small machine, so sending the
    queries of concurrent requests in one call matters as much as batching the forward pass.

    Args:
        send: ``async items -> results`` (same length and order).
        max_items: items per list.
        max_in_flight: lists awaiting their results at once.
        linger_s: how long items arriving at a free slot wait for more before their list leaves.
    """

    def __init__(self, send: Any, max_items: int = 64, max_in_flight: int = 2, linger_s: float = 0.0):
        self._send, self.max_items, self.max_in_flight = send, max_items, max_in_flight
        self.linger_s = linger_s
        self._pending: list[tuple[Any, asyncio.Future]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._in_flight = 0

    async def __call__(self, item: Any) -> Any:
        future = asyncio.get_running_loop().create_future()
        self._pending.append((item, future))
        self._pump(linger=self.linger_s > 0)
        return await future

    def _pump(self, linger: bool = False) -> None:
        while self._pending and self._in_flight < self.max_in_flight:
            if linger and len(self._pending) < self.max_items:
                self._timer = self._timer or asyncio.get_running_loop().call_later(
                    self.linger_s, self._linger_over
                )
                return
            batch, self._pending = self._pending[: self.max_items], self._pending[self.max_items :]
            self._in_flight += 1
            asyncio.ensure_future(self._run(batch))
        if not self._pending and self._timer:  # what it waited for has left
            self._timer.cancel()
            self._timer = None

    def _linger_over(self) -> None:
        self._timer = None
        self._pump()

    async def _run(self, batch: list[tuple[Any, asyncio.Future]]) -> None:
        try:
            results = await self._send([item for item, _ in batch])
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
        except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
        finally:
            self._in_flight -= 1
            self._pump()


class HandleEmbedder(Embedder):
    """The index's query embedder, computed by the ``QueryEmbedder`` deployment.

    Same model id, dimension and query task as the build (so ``WikiIndex.open`` accepts it); the
    instruction prefix is applied by the caller, the remote side embeds and L2-normalises like
    ``embed_documents``. The service awaits :meth:`aembed` on the event loop and passes the vector to the
    engine, so the engine never embeds, nor blocks on the deployment.

    Args:
        spec: the index manifest's embedder spec.
        dim: its dimension.
        remote: ``async text -> vector`` (joins the ``QueryEmbedder``'s dynamic batches).
        remote_batch: ``async texts -> rows`` (``QueryEmbedder.embed_batch``: one forward pass).
    """

    kind = "serve-handle"

    def __init__(self, spec: dict[str, Any], dim: int, remote: Any, remote_batch: Any):
        super().__init__(spec["model"], spec.get("query_task"))
        self._dim, self._remote, self._remote_batch = int(dim), remote, remote_batch

    @property
    def dim(self) -> int:
        return self._dim

    async def aembed(self, text: str) -> np.ndarray:
        return await self._remote(text)

    async def aembed_batch(self, texts: list[str]) -> np.ndarray:
        return await self._remote_batch(texts)

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError(
            "HandleEmbedder embeds on the event loop only (aembed): a query reached the engine "
            "without its vector"
        )


def open_query_embedder(
    index: str | Path,
    device: str | None = None,
    runtime: str | None = None,
    threads: int | None = None,
    endpoint: str | None = None,
) -> Embedder:
    """The index's embedder (its manifest's spec) on ``device`` with the query ``runtime`` and CPU ``threads``
    (see :class:`QueryEmbedder`); with ``endpoint``, its space embedded by that ``/v1/embeddings`` server
    instead, checked now (``sws.index.embedders.endpoint``).

    Raises:
        ValueError: an explicit runtime for an embedder without runtimes, or one it does not know.
        RuntimeQualityError: an explicit runtime failed the agreement gate.
        EmbeddingError: the endpoint is down or answers a wrong dimension, NaN/Inf or a malformed body.
    """
    from sws.index import make_embedder
    from sws.index.embedders.endpoint import endpoint_embedder
    from sws.index.manifest import read_manifest

    built = read_manifest(Path(index))["embedder"]
    if endpoint:
        return endpoint_embedder(built, endpoint)
    spec = dict(built["spec"])
    if spec["kind"] in RUNTIMES:
        spec |= {"device": device} if device else {}
        spec |= {"threads": threads} if threads else {}
    if runtime == "auto" and spec["kind"] not in RUNTIMES:
        runtime = None
    if runtime:
        if spec["kind"] not in RUNTIMES:
            raise ValueError(
                f"embedding.runtime={runtime!r} applies to {' and '.join(RUNTIMES)}, not {spec['kind']}"
            )
        spec["runtime"] = runtime
    return make_embedder(**spec)


def describe_embedder(embedder: Embedder, device: str | None) -> dict[str, Any]:
    """The query embedder's space and how it computes (``Embedder.runtime_info``), as ``/info`` shows it."""
    e = embedder
    space = {"model": e.model, "dim": e.dim, "query_task": e.query_task, "fingerprint": e.fingerprint}
    return space | {"device": device} | e.runtime_info()


@serve.deployment(name="QueryEmbedder")
class QueryEmbedder:
    """Embeds query texts (instruction already applied) in dynamic batches: one forward pass at a time, and
    the texts that arrive while it runs go together in the next (:class:`RequestCoalescer` with one list in
    flight). ``@serve.batch`` is not used: it forms its next batch while the current one runs, so a text
    arriving just after a pass starts left alone after its timeout and waited for the pass anyway (half the
    batches held one query under 16 vector clients).

    Args:
        index: the index directory (its manifest names the embedder).
        device: torch device for local models ("cuda", "cpu"); None: the library's choice.
        threads: the embedder's CPU threads (None: leave as Ray set them).
        max_batch_size: texts per forward pass; batch_wait_timeout_s: how long a text waits for more while
            the embedder is idle (both adjustable via ``user_config``).
        runtime: the query runtime of a sentence-transformers or Qwen3 index (``RUNTIMES``; "auto": the
            fastest the hardware has that passes the agreement gate, and for other embedders the index's;
            None: the index's). It keeps the fingerprint, so a torch-built index is served with OpenVINO
            bf16 queries; :meth:`describe` says which was chosen.
        endpoint: an OpenAI-compatible ``/v1/embeddings`` server that embeds the batches instead (the index's
            space, checked at start; ``device``, ``threads`` and ``runtime`` then unused).
    """

    def __init__(
        self,
        index: str,
        device: str | None = None,
        threads: int | None = None,
        max_batch_size: int = 32,
        batch_wait_timeout_s: float = 0.002,
        runtime: str | None = None,
        endpoint: str | None = None,
    ):
        bind_replica_grpc_to_node_ip()
        self.embedder = open_query_embedder(index, device, runtime, threads, endpoint)
        self.device = device
        self._batches = RequestCoalescer(self._forward, max_in_flight=1)
        self.reconfigure({"max_batch_size": max_batch_size, "batch_wait_timeout_s": batch_wait_timeout_s})

    def reconfigure(self, user_config: dict[str, Any]) -> None:
        if "max_batch_size" in user_config:
            self._batches.max_items = int(user_config["max_batch_size"])
        if "batch_wait_timeout_s" in user_config:
            self._batches.linger_s = float(user_config["batch_wait_timeout_s"])

    def describe(self) -> dict[str, Any]:
        """What this replica embeds with (each ingress replica checks it against its index)."""
        return describe_embedder(self.embedder, self.device)

    async def _forward(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embedder.embed_documents, texts)

    async def embed_batch(self, texts: list[str]) -> np.ndarray:
        """One request's many texts (a ``/retrieve`` batch) in one forward pass, outside the dynamic batches."""
        return await self._forward(texts)

    async def embed_many(self, texts: list[str]) -> list[np.ndarray]:
        """Several callers' texts in one handle call; they join the dynamic batches."""
        return list(await asyncio.gather(*(self._batches(text) for text in texts)))
