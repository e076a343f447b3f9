"""The retrieval app's deployments and builder: ``RetrievalIngress`` (HTTP + MCP + handle API over the opened
index) and ``QueryEmbedder`` (query embeddings in dynamic batches, on a GPU when there is one; in
``embedding.py``).

    serve.run(build_app(ServeConfig(index="sws-out/index")), name="sws", route_prefix="/")
    # serve deploy: import_path serve.retrieval:app_builder, args = ServeConfig fields

Each ingress replica opens the index once (Tantivy and the Arrow chunk ids memory-mapped; FAISS is read
into memory) and runs the engine on its event loop (``service.py``). Ingress and retriever share a
deployment on purpose: on a small machine every handle hop costs as much as a keyword search
(``benchmarks/serve_http.py``); replicas scale the pair together. Vector and RRF queries get their
embedding from ``QueryEmbedder`` through a handle: each replica sends its concurrent queries in one call
(:class:`RequestCoalescer`), and the embedder merges the calls of all replicas into forward passes.

The ingress replicas run on asyncio's own event loop, not uvloop (``ASYNCIO_LOOP``): libuv accepts one new
connection per loop turn, and a turn of a loop that runs searches inline lasts many milliseconds, so under
load new connections (HAProxy's, and its health checks) waited in the accept queue for seconds; the checks
timed out, HAProxy marked the replica down and sent requests to Serve's fallback proxy, whose router
backs off: 256 keyword clients saw a p99 of 17 s at a p50 of 0.25 s (0.6 s p99 on asyncio's loop;
``benchmarks/serve_vs_reference.py``). Each replica installs ``serve.client_bounds`` as it starts, which
also turns Nagle's algorithm off on its connections (asyncio's loop leaves it on for Ray's sockets).

Other Ray jobs call ``serve.get_app_handle(name).call_tool.remote(tool, arguments_json)`` (or use
``sws.transport.HandleTools``); ``search``, ``open_url``, ``random``, ``tools`` and ``info`` are also handle
methods.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
from ray import serve
from ray.serve.config import BackpressureConfig

from serve.client_bounds import install as install_client_bounds
from serve.grpc_binding import bind_replica_grpc_to_node_ip
from serve.retrieval.embedding import (
    HandleEmbedder,
    QueryEmbedder,
    RequestCoalescer,
    describe_embedder,
    open_query_embedder,
)
from serve.retrieval.service import Limits, Overloaded, RetrievalService
from sws.config import AutoscalingSettings, ServeConfig, merge_section
from sws.env import import_tool_modules
from sws.host_guard import HostPolicy
from sws.manifest import versions


def load_serve_config(args: ServeConfig | dict[str, Any] | None) -> ServeConfig:
    """``args`` validated against ``ServeConfig`` (a ``ServeConfig`` is taken as it is: it was when made);
    ``{"profile": "paper", ...}`` starts from that profile's ``serve:`` section. Unknown keys, wrong types and
    bad values raise ``ValueError``."""
    return merge_section(ServeConfig, args, "serve")


ASYNCIO_LOOP = {"env_vars": {"RAY_USE_UVLOOP": "0"}}  # a Ray worker's event loop: asyncio's, not uvloop


def _replica_options(replicas: AutoscalingSettings) -> dict[str, Any]:
    if replicas.min_replicas == replicas.max_replicas:
        return {"num_replicas": replicas.max_replicas}
    return {"autoscaling_config": asdict(replicas)}


@serve.deployment(name="RetrievalIngress")
@serve.ingress()
class RetrievalIngress:
    """HTTP (``serve/retrieval/http_app.py``), MCP (``serve/retrieval/mcp_endpoint.py``) and handle API over one opened index.

    Args:
        cfg: the service's settings (checked by the app builder's caller, not again per replica).
        embedder: handle of ``QueryEmbedder``; None embeds queries in this replica.
    """

    async def __init__(self, cfg: ServeConfig, embedder: Any = None):
        from sws.index import EmbedderMismatchError
        from sws.index.manifest import read_manifest
        from sws.search import SearchEngine

        bind_replica_grpc_to_node_ip()
        install_client_bounds()  # before Serve starts this replica's HTTP server (HAProxy's ingress)
        import_tool_modules(cfg.tool_modules)
        self.cfg = cfg
        manifest = self.manifest = read_manifest(Path(cfg.index))
        self._embedder = embedder
        self._coalescer: RequestCoalescer | None = None
        query_embedder = None
        if embedder is not None:
            built = manifest["embedder"]
            remote = await embedder.describe.remote()
            if remote["fingerprint"] != built["fingerprint"]:
                raise EmbedderMismatchError(
                    f"the QueryEmbedder deployment embeds with {remote}, the index {cfg.index} was built "
                    f"with {built['spec']} (fingerprint {built['fingerprint']})"
                )
            query_embedder = engine_embedder = HandleEmbedder(
                built["spec"], built["dim"], self._remote_embed, self._remote_embed_batch
            )
        else:  # the in-replica model, loaded now: fail at startup, not on a request
            device = cfg.embedding.device or "cpu"  # the ingress holds no GPU
            emb = cfg.embedding
            engine_embedder = open_query_embedder(cfg.index, device, emb.runtime, endpoint=emb.endpoint)
            remote = describe_embedder(engine_embedder, device)
        engine = SearchEngine.open(cfg.index, embedder=engine_embedder, ef_search=cfg.ef_search)
        try:
            self.replica = serve.get_replica_context().replica_id.to_full_id_str()
        except Exception:  # noqa: BLE001 - outside a replica (tests of the class)
            self.replica = None
        limits = Limits(cfg.max_body_bytes, cfg.request_timeout_s)
        self.service = RetrievalService(
            engine,
            tool_options=asdict(cfg.tools),
            limits=limits,
            info=self._static_info(manifest) | {"query_embedding": remote},
            prefetch=query_embedder,
            threads=cfg.threads,
            failure_window_s=cfg.health_failure_window_s,
            retrieve=cfg.retrieve,
        )

    def check_health(self) -> None:
        """Serve's replica probe: every index file is still there with its size (stat only, no reads).

        Raises:
            IndexMissingError / IndexCorruptError: Serve then replaces the replica, which reopens the index.
        """
        from sws.index.manifest import check_files

        check_files(Path(self.cfg.index), self.manifest)

    def __serve_build_asgi_app__(self) -> Any:
        from serve.retrieval.http_app import make_http_app

        cfg, mcp = self.cfg, None
        if cfg.mcp:
            from serve.retrieval.mcp_endpoint import make_mcp

            mcp = make_mcp(
                self.service,
                max_streams=cfg.mcp_max_streams,
                stream_idle_s=cfg.mcp_stream_idle_s,
                retry_after_s=cfg.retry_after_s,
            )
        token = os.environ.get(cfg.token_env) if cfg.token_env else None
        health = {"app": cfg.app_name, "replica": self.replica}
        hosts = HostPolicy(
            cfg.host,
            tuple(cfg.allowed_hosts),
            tuple(cfg.allowed_origins),
            hosts_option="serve.allowed_hosts",
            origins_option="serve.allowed_origins",
        )
        return make_http_app(
            self.service,
            token=token,
            health=lambda: health,
            mcp=mcp,
            retry_after_s=cfg.retry_after_s,
            open_url_cache=cfg.open_url_cache_entries,
            open_url_cache_bytes=cfg.open_url_cache_bytes,
            hosts=hosts,
        )

    # ---- handle API -----------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments_json: str) -> str:
        """The observation (as in-process ``call_tool``); raises ``BackendFailure`` or ``TimeoutError``."""
        return await self.service.acall(name, arguments_json)

    async def search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Structured search (``POST /search``); raises ``ServiceError`` for bad arguments."""
        return await self.service.asearch(arguments)

    async def open_url(self, url: str) -> dict[str, Any]:
        """Structured open (``POST /open_url``): every outcome of the tool, ``outcome`` says which."""
        return await self.service.aopen_url({"url": url})

    async def random(self, mode: str = "chunk", seed: int | None = None) -> dict[str, Any]:
        """A random chunk or article (``/random``); the same seed gives the same one."""
        return await self.service.arandom({"mode": mode, "seed": seed})

    async def retrieve(self, queries: list[str], topk: int | None = None, **options: Any) -> dict[str, Any]:
        """Search-R1's ``/retrieve`` for a Ray job: ``{"result": [hits per query]}``; ``options`` are the
        body's other fields (``return_scores``, ``method``, ``max_chars``, ``only_title``)."""
        return await self.service.aretrieve({"queries": queries, "topk": topk, **options})

    async def access(self, urls: list[str]) -> dict[str, Any]:
        """ASearcher's ``/access``: each URL's view, None for one that opens nothing."""
        return await self.service.aaccess({"urls": urls})

    async def tools(self) -> list[dict[str, Any]]:
        return self.service.schemas

    async def info(self) -> dict[str, Any]:
        return self.service.info()

    # ---- internals ----------------------------------------------------------------------------------

    async def _remote_embed(self, text: str) -> np.ndarray:
        if self._coalescer is None:  # created on the serving loop
            self._coalescer = RequestCoalescer(self._remote_embed_many)
        return await self._coalescer(text)

    async def _remote_embed_many(self, texts: list[str]) -> list[np.ndarray]:
        return await _embedder_call(self._embedder.embed_many, texts)

    async def _remote_embed_batch(self, texts: list[str]) -> np.ndarray:
        return await _embedder_call(self._embedder.embed_batch, texts)

    def _static_info(self, manifest: dict[str, Any]) -> dict[str, Any]:
        cfg = self.cfg
        keys = ("fingerprint", "corpus", "keyword", "embedder")
        index = {k: manifest[k] for k in keys if k in manifest}
        index["dense"] = {k: v for k, v in manifest.get("dense", {}).items() if k != "shards"}
        index["path"] = str(cfg.index)
        return {
            "service": "sws-retrieval",
            "app": cfg.app_name,
            "replica": self.replica,
            "index": index,
            "versions": versions(),
            "tools": asdict(cfg.tools),
            "bounds": {
                "max_body_bytes": cfg.max_body_bytes,
                "max_query_chars": cfg.tools.max_query_chars,
                "max_top_k": cfg.tools.max_top_k,
                "retrieve": asdict(cfg.retrieve),
                "request_timeout_s": cfg.request_timeout_s,
                "max_ongoing_requests": cfg.max_ongoing_requests,
                "max_queued_requests": cfg.max_queued_requests,
            },
            "embedding": asdict(cfg.embedding),
            "auth": bool(cfg.token_env and os.environ.get(cfg.token_env)),
            "mcp": cfg.mcp,
        }


async def _embedder_call(method: Any, texts: list[str]) -> Any:
    """``method.remote(texts)``; the deployment's failure as a ``BackendFailure`` (a list may carry several
    requests: none of them is to blame)."""
    from ray.exceptions import RayTaskError
    from ray.serve.exceptions import BackPressureError

    from sws.env import BackendFailure

    try:
        return await method.remote(texts)
    except BackPressureError as exc:
        raise Overloaded(f"the query embedder's queue is full: {exc}") from exc
    except RayTaskError as exc:
        raise BackendFailure(f"QueryEmbedder failed: {type(exc.cause).__name__}: {exc.cause}") from exc


def _gpus(cfg: ServeConfig) -> float:
    if cfg.embedding.endpoint:  # the endpoint's server computes
        return 0.0
    if cfg.embedding.num_gpus is not None:
        return cfg.embedding.num_gpus
    import ray

    return 1.0 if ray.is_initialized() and ray.cluster_resources().get("GPU", 0) >= 1 else 0.0


def check_index(cfg: ServeConfig) -> ServeConfig:
    """``cfg`` with its index directory made absolute, once it is one (``verify_on_open``: every file's
    checksum checked too).

    Raises:
        ValueError: no index directory, or not one.
        SwsIndexError: ``verify_on_open`` found a damaged index file (named).
    """
    if not cfg.index:
        raise ValueError("the retrieval app needs an index directory (serve.index)")
    index = Path(cfg.index).expanduser().resolve()
    if not (index / "manifest.json").is_file():
        raise ValueError(
            f"{index} is not an index directory (no manifest.json); build it with `sws build index`"
        )
    if cfg.verify_on_open:
        from sws.index.manifest import check_files, read_manifest

        check_files(index, read_manifest(index), verify=True)
    return replace(cfg, index=str(index))


def build_app(cfg: ServeConfig | dict[str, Any]) -> Any:
    """The retrieval application (an unstarted ``serve.Application``).

    Raises:
        ValueError: bad settings, no index directory, or a tool module that cannot be imported.
        SwsIndexError: ``verify_on_open`` found a damaged index file (named).
    """
    cfg = check_index(load_serve_config(cfg))
    import_tool_modules(
        cfg.tool_modules
    )  # here first: a module that does not import is refused before deploying
    embedder = None
    if cfg.embedding.batching:
        emb = cfg.embedding
        gpus = _gpus(cfg)
        device = emb.device or ("cuda" if gpus > 0 else "cpu")
        threads = emb.threads or (None if gpus > 0 else max(1, math.ceil(emb.num_cpus)))
        embedder = QueryEmbedder.options(
            **_replica_options(emb.replicas),
            max_ongoing_requests=emb.max_ongoing_requests,
            max_queued_requests=emb.max_queued_requests,
            ray_actor_options={"num_cpus": emb.num_cpus, "num_gpus": gpus},
        ).bind(
            cfg.index,
            device,
            threads,
            emb.max_batch_size,
            emb.batch_wait_timeout_s,
            runtime=emb.runtime,
            endpoint=emb.endpoint,
        )
    ingress = RetrievalIngress.options(
        **_replica_options(cfg.replicas),
        max_ongoing_requests=cfg.max_ongoing_requests,
        max_queued_requests=cfg.max_queued_requests,
        backpressure_config=BackpressureConfig(status_code=503, retry_after_s=cfg.retry_after_s),
        ray_actor_options={"num_cpus": cfg.num_cpus, "runtime_env": ASYNCIO_LOOP},
        graceful_shutdown_timeout_s=5,
        logging_config={"enable_access_log": cfg.access_log},
    )
    return ingress.bind(cfg, embedder)


def app_builder(args: dict[str, Any]) -> Any:
    """``serve deploy`` / ``serve run`` entry: ``import_path: serve.retrieval:app_builder`` with ``args``
    holding ``ServeConfig`` fields (validated)."""
    return build_app(args)
