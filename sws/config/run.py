"""The whole run: ``SwsConfig``, one field per section (the keys of a profile YAML), and the ``ray`` section."""

from __future__ import annotations

from dataclasses import dataclass, field

from sws.config.corpus import ChunkConfig, CleanConfig, CorpusConfig, DumpConfig
from sws.config.eval import EvalConfig
from sws.config.index import EmbedderConfig, EmbedJobConfig, IndexConfig
from sws.config.serving import LLMServeConfig, ServeConfig, ToolClientConfig


@dataclass
class RayConfig:
    """Where Ray runs (every stage that starts one)."""

    address: str | None = None  # None: start a local Ray; "auto": join the running cluster
    num_cpus: int | None = None  # local Ray only
    workers: int | None = None  # corpus actor-pool size; None: one per available CPU


@dataclass
class SwsConfig:
    """A run's resolved config; saved next to every output (``to_dict``)."""

    name: str = "local"
    dump: DumpConfig = field(default_factory=DumpConfig)
    clean: CleanConfig = field(default_factory=CleanConfig)
    chunk: ChunkConfig = field(default_factory=ChunkConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    embed: EmbedJobConfig = field(default_factory=EmbedJobConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    serve: ServeConfig = field(default_factory=ServeConfig)
    llm: LLMServeConfig = field(default_factory=LLMServeConfig)
    tools: ToolClientConfig = field(default_factory=ToolClientConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
