"""The serving sections: the retrieval service (``serve``), the actor LLM (``llm``) and the agent's tool client
(``tools``). The Serve application builders (``serve/retrieval/app.py``, ``serve/llm.py``) accept the same fields as
their typed ``args`` (``sws.config.merge_section``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INGRESS_MODES = ("haproxy", "proxy")
DEFAULT_PORT = 11536  # the reference tool server's port, so its clients' TOOL_BASE_URL default keeps working


@dataclass
class ToolOptions:
    """The tool contract's knobs (``sws.env.WikiTools`` keyword arguments), shared by every transport."""

    max_top_k: int = 50
    max_query_chars: int = 4096  # longer queries are an error observation
    link_mode: str = "wikiid"  # wikiid | title
    snippet_chars: int = 1024
    article_max_chars: int | None = None  # None: full articles whole (parity)
    search_description: str = "markdown"  # markdown (repository) | ranked (paper)


@dataclass
class AutoscalingSettings:
    """Replica range of a deployment; ``min_replicas == max_replicas`` means a fixed count."""

    min_replicas: int = 1
    max_replicas: int = 1
    # per replica; Serve adds replicas above it. 8: where one retrieval replica's rrf QPS levels off
    # (benchmarks/serve_autoscale.py's knee; more requests per replica only queue)
    target_ongoing_requests: float = 8.0
    upscale_delay_s: float = 5.0
    downscale_delay_s: float = 60.0
    look_back_period_s: float = 30.0  # the window Serve averages the ongoing requests over (Ray's default)

    def __post_init__(self):
        if self.min_replicas > self.max_replicas or self.max_replicas < 1:
            raise ValueError(f"replicas: min {self.min_replicas} > max {self.max_replicas} or max < 1")


# `sws serve` on a cluster, unless told a count: configs/serve/cluster.yaml's retrieval replicas (tested equal):
# two so that a lost node leaves one serving, a new one after 10 s over the target (a replica starts in
# seconds), removed after 5 min below it (a cold one costs the index's open: README "Full scale")
CLUSTER_REPLICAS = AutoscalingSettings(
    min_replicas=2,
    max_replicas=32,
    target_ongoing_requests=8.0,
    upscale_delay_s=10.0,
    downscale_delay_s=300.0,
)


def check_endpoint(endpoint: str | None, key: str) -> None:
    """An embedding endpoint is unset or an http(s) URL (``key`` names the setting in the error)."""
    if endpoint is not None and not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"{key}={endpoint!r}: expected the http(s) URL of a /v1/embeddings server")


@dataclass
class QueryEmbeddingConfig:
    """The query-embedding deployment (dynamic batching: one forward pass at a time, the queries that arrive
    meanwhile go in the next)."""

    batching: bool = True  # False: every retrieval replica embeds its own queries in-process
    max_batch_size: int = 32
    batch_wait_timeout_s: float = 0.002  # how long a query waits for company while the embedder is idle
    replicas: AutoscalingSettings = field(default_factory=AutoscalingSettings)
    num_cpus: float = 1.0
    num_gpus: float | None = None  # None: 1 when the cluster has a GPU when the app is built, else 0
    device: str | None = None  # None: "cuda" with a GPU, else "cpu"
    threads: int | None = None  # runtime CPU threads per replica (None: num_cpus rounded up; under a local
    # `sws serve`: every CPU of its Ray, shared among the replicas)
    # the query runtime (also with batching off). sentence-transformers: "torch", "onnx" (same vectors), "openvino"
    # (bf16 on a CPU with bf16 units) or "auto" (openvino there, else onnx, for a mean-pooled model on the CPU);
    # Qwen3: "torch", "torch-bf16", "auto" (bf16 on such a CPU). A reduced precision must pass the agreement
    # gate at start (sws.index.embedders.precision). None: the index's. Other embedders: the index's with "auto".
    runtime: str | None = "auto"
    max_ongoing_requests: int = 512  # callers waiting for a batch slot
    # calls queued beyond those; more get 503 with Retry-After (each ingress replica has at most a few lists
    # and /retrieve batches in flight, so only an overloaded service reaches it)
    max_queued_requests: int = 256
    # an OpenAI-compatible /v1/embeddings server that embeds the queries in the index's space (its model name,
    # query task and dimension; bearer token from SWS_EMBEDDING_API_KEY), checked at start: the reference's
    # query path (sws.index.embedders.endpoint). None: the index's embedder, here (device, runtime, threads)
    endpoint: str | None = None

    def __post_init__(self):
        check_endpoint(self.endpoint, "embedding.endpoint")
        if self.endpoint and self.runtime not in (None, "auto"):
            raise ValueError(
                f"embedding.runtime={self.runtime!r} is a local runtime; the queries go to embedding.endpoint"
            )


@dataclass
class RetrieveSettings:
    """``POST /retrieve`` and ``POST /access``, the RL trainers' retriever (``serve/retrieval/retrieve.py``).

    A request's queries go through the embedder and the index in batches of ``batch_queries``, at most
    ``parallel_batches`` of one request at once, so a rollout batch streams through the replicas and a request
    whose client has gone stops at the next batch. A request whose answer could exceed ``max_answer_chars``
    (queries x topk x (max_chars + a document's framing)) is refused before any work; its body may hold
    ``max_queries`` queries of ``tools.max_query_chars`` characters (the body bound of both routes).
    """

    max_queries: int = 4096  # per request: a Search-R1 GRPO step sends 512 prompts x 5 rollouts = 2,560
    # a document's text cut: 3 hits in Search-R1's rendering fit its max_obs_length of 500 Qwen3 tokens
    # (300 questions of the six QA sets over the bundled sample: at most 483, p99 464; 1 024 gave a median 890)
    max_chars: int = 360
    batch_queries: int = 256  # queries embedded (one forward pass) and searched together
    parallel_batches: int = 2  # batches of one request in flight at once
    max_answer_chars: int = 64 * 2**20  # bound on queries x topk x (max_chars + 256); 422 above it

    def __post_init__(self):
        for name in ("max_queries", "batch_queries", "parallel_batches", "max_answer_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"retrieve.{name}={getattr(self, name)} must be at least 1")
        if not 32 <= self.max_chars <= 100_000:
            raise ValueError(f"retrieve.max_chars={self.max_chars} must be between 32 and 100000")


@dataclass
class ServeConfig:
    """The retrieval service: HTTP + MCP ingress and handle API over one index; its values are checked here,
    once, when the config is read (the app builder and the replicas take it as it is).

    Requests beyond ``max_ongoing_requests`` per replica wait in its queue; beyond ``max_queued_requests`` they
    get 503 with ``Retry-After: retry_after_s``. The bearer token is read from the environment variable named
    by ``token_env`` (never from a config file); unset or empty means no authentication. Requests whose
    ``Host`` or ``Origin`` is foreign get 403 (``sws.host_guard``: ``host``, ``allowed_hosts``,
    ``allowed_origins``).
    """

    index: str | None = None  # None: index.out of the run config
    # host/port/ingress: `sws serve`; with `serve deploy` the file's http_options (the Host check uses `host`:
    # set it to their host there too)
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    app_name: str = "sws"
    route_prefix: str = "/"
    # `sws serve`: a directory for the RL trainers' address files (ASearcher's Host*_IP*.txt, rLLM's rag_url;
    # serve/address_files.py), written when the service answers, removed when it stops; None: none
    address_dir: str | None = None
    ingress: str = "haproxy"  # haproxy: Ray Serve's HAProxy + direct ingress; proxy: the Python proxy
    haproxy_stats: bool = False  # a local HAProxy's stats page and Prometheus exporter (no auth), on `host`
    token_env: str = "SWS_SERVE_TOKEN"
    # Host names answered besides the loopback ones and `host` (on 0.0.0.0: every IP literal); "*": any
    allowed_hosts: list[str] = field(default_factory=list)
    # browser Origins (scheme://host[:port]) answered besides the request's own and loopback ones; "*": any
    allowed_origins: list[str] = field(default_factory=list)
    # `sws serve`: a client that has not sent a whole request (headers, body) this long gets 408 and is dropped
    request_read_timeout_s: float = 10.0
    max_connections_per_source: int = 1024  # `sws serve`: open ones per client address, more closed (0: none)
    replicas: AutoscalingSettings = field(default_factory=AutoscalingSettings)
    num_cpus: float = 0.5
    max_ongoing_requests: int = 32
    max_queued_requests: int = 4096
    retry_after_s: float = 1.0
    request_timeout_s: float = 60.0  # one tool call inside a replica
    threads: int = 4  # per replica, for searches that embed in-process (others run on the event loop)
    max_body_bytes: int = 65_536
    open_url_cache_entries: int = 4096  # rendered open_url answers kept per replica (LRU, bytes); 0: none
    open_url_cache_bytes: int = (
        64 * 2**20
    )  # ...and at most this many bytes of them (bodies and keys); 0: none
    access_log: bool = False  # one log line per request in the replica logs (costs ~3% of throughput)
    ef_search: int | None = None  # None: the value saved in the index
    verify_on_open: bool = False  # check every index file's checksum before deploying (sizes always)
    health_failure_window_s: float = 60.0  # GET /health answers 503 this long after a backend failure
    mcp: bool = True  # the MCP streamable-HTTP endpoint at /mcp
    mcp_max_streams: int = 16  # open GET /mcp streams per replica (each holds a request slot); 503 beyond
    mcp_stream_idle_s: float = 120.0  # a GET /mcp stream that sends no message this long is closed
    tools: ToolOptions = field(default_factory=ToolOptions)
    # modules whose tools register when imported (sws.env.register_tool): imported by the app builder, which
    # refuses one that does not import, and by each replica; /tools, /call and MCP then answer their tools
    tool_modules: list[str] = field(default_factory=list)
    retrieve: RetrieveSettings = field(default_factory=RetrieveSettings)
    embedding: QueryEmbeddingConfig = field(default_factory=QueryEmbeddingConfig)

    def __post_init__(self):
        if self.ingress not in INGRESS_MODES:
            raise ValueError(f"ingress={self.ingress!r}: expected one of {list(INGRESS_MODES)}")
        if self.request_read_timeout_s <= 0 or self.max_connections_per_source < 0:
            raise ValueError(
                f"request_read_timeout_s={self.request_read_timeout_s} must be above 0 and "
                f"max_connections_per_source={self.max_connections_per_source} at least 0 (0: no bound)"
            )
        for name in ("open_url_cache_entries", "open_url_cache_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}={getattr(self, name)} must be at least 0 (0: no cache)")
        if self.mcp and not 0 <= self.mcp_max_streams < self.max_ongoing_requests:
            raise ValueError(
                f"mcp_max_streams={self.mcp_max_streams} must be at least 0 and below max_ongoing_requests="
                f"{self.max_ongoing_requests}: each open MCP stream holds one of a replica's request slots"
            )


@dataclass
class ToolClientConfig:
    """How the agent reaches the tools: ``inprocess`` (open the index here), ``handle`` (a Serve deployment
    handle, inside the cluster) or ``http`` (the service's ``POST /call``)."""

    transport: str = "inprocess"
    index: str | None = None  # inprocess: None means index.out of the run config
    url: str = f"http://127.0.0.1:{DEFAULT_PORT}"  # http
    app_name: str = "sws"  # handle
    token_env: str = "SWS_SERVE_TOKEN"  # http: bearer token from this environment variable
    timeout_s: float = 60.0  # per attempt
    max_attempts: int = 3  # attempts for transient failures (overload, lost connection), the first included
    backoff_s: float = 0.5  # base of the jittered exponential backoff
    backoff_max_s: float = 8.0
    max_connections: int = 256  # http: connection-pool size per process
    tools: ToolOptions = field(default_factory=ToolOptions)  # inprocess only; a service applies its own
    embedding_endpoint: str | None = None  # inprocess: as serve.embedding.endpoint (None: the index's)
    # modules whose tools register when imported (sws.env.register_tool), imported by `sws eval` and its workers
    modules: list[str] = field(default_factory=list)

    def __post_init__(self):
        check_endpoint(self.embedding_endpoint, "tools.embedding_endpoint")


LLM_DEVICES = ("gpu", "cpu")


@dataclass
class LLMServeConfig:
    """The actor LLM on Ray Serve LLM (vLLM engine), OpenAI-compatible (``serve/llm.py``).

    ``device``: ``gpu`` (the ``gpu`` extra, vLLM's CUDA build) or ``cpu`` (the ``llm-cpu`` extra, vLLM's CPU
    build; KV cache of ``cpu_kv_cache_gib``, chunked prefill off). ``tool_call_parser`` / ``reasoning_parser``
    None: chosen from the model family (Qwen3*: ``qwen3_coder`` / ``qwen3``, as the reference's SGLang launch,
    ``hermes`` where the chat template writes JSON tool calls as plain Qwen3's; Gemma-4: ``gemma4``; Mistral:
    ``mistral``).

    Its HTTP ingress answers as the retrieval service's (``ServeConfig``, ``sws.host_guard``): a foreign
    ``Host`` or ``Origin`` gets 403, a missing or wrong bearer token (from ``token_env``, unset = none) 401, a
    body over ``max_body_bytes`` 413. ``sws serve --llm`` copies ``host``, ``allowed_hosts``,
    ``allowed_origins`` and ``token_env`` from the retrieval service it runs beside (one listener, one rule).
    """

    model: str = "Qwen/Qwen3.5-9B"  # Hugging Face id or a local / s3:// / gs:// path
    served_model_name: str | None = None  # None: the model's last path component
    device: str = "gpu"  # gpu | cpu
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    max_model_len: int = 65_536  # the model's context for the engine (prompt + completion), per model
    dtype: str = "bfloat16"
    gpu_memory_utilization: float = 0.85  # gpu only
    cpu_kv_cache_gib: int = 4  # cpu only: VLLM_CPU_KVCACHE_SPACE of the engine
    # cpu only: cores vLLM keeps off the engine's OpenMP threads (VLLM_CPU_NUM_OF_RESERVED_CPU); None: vLLM's
    # rule, one per engine worker (half of a 2-core machine; 0 there: 1.4-1.8x the tokens/s, measured)
    cpu_reserved_cores: int | None = None
    enforce_eager: bool = False  # True: no CUDA graphs / torch.compile (a faster start, slower decode)
    max_num_seqs: int = 64  # concurrent sequences per replica (the reference ran 8 per GPU)
    chat_template: str | None = None  # a Jinja file (or the template) for models whose own lacks tools
    tool_call_parser: str | None = None
    tool_strict_level: str | None = (
        None  # auto | function | parameter (vLLM's --tool-strict-level); None: auto
    )
    reasoning_parser: str | None = None
    accelerator_type: str | None = None  # e.g. A100-80G, H100; None: any GPU
    num_cpus: float = 1.0  # cpu only: Ray CPUs per engine worker, shared with its replica; ingress: 1 more
    replicas: AutoscalingSettings = field(default_factory=AutoscalingSettings)
    max_ongoing_requests: int = 64
    engine_kwargs: dict[str, Any] = field(default_factory=dict)  # any other vLLM engine argument
    route_prefix: str = "/llm"  # where `sws serve --llm` mounts it (OpenAI base URL <service>/llm/v1)
    app_name: str = "llm"
    host: str = "127.0.0.1"  # the address its HTTP ingress listens on (the Host check; as ServeConfig's)
    allowed_hosts: list[str] = field(default_factory=list)  # as ServeConfig's
    allowed_origins: list[str] = field(default_factory=list)  # as ServeConfig's
    token_env: str = (
        "SWS_SERVE_TOKEN"  # bearer token from this environment variable (OpenAI clients' api_key)
    )
    max_body_bytes: int = 16 * 2**20  # a chat request's body (65 536 tokens of text are ~0.3 MB)

    def __post_init__(self):
        if self.device not in LLM_DEVICES:
            raise ValueError(f"device={self.device!r}: must be one of {LLM_DEVICES}")
        if self.tensor_parallel_size < 1 or self.pipeline_parallel_size < 1:
            raise ValueError("tensor_parallel_size and pipeline_parallel_size must be >= 1")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization={self.gpu_memory_utilization}: must be in (0, 1]")
        reserved = self.cpu_reserved_cores
        if self.device == "cpu" and (
            self.accelerator_type or self.cpu_kv_cache_gib < 1 or self.num_cpus <= 0 or (reserved or 0) < 0
        ):
            raise ValueError(
                f"device cpu: no accelerator_type ({self.accelerator_type!r}), cpu_kv_cache_gib >= 1 "
                f"({self.cpu_kv_cache_gib}), num_cpus > 0 ({self.num_cpus}) and cpu_reserved_cores >= 0 "
                f"({reserved})"
            )
