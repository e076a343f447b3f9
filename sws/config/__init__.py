"""OmegaConf structured configs: the single description of a run.

Sections are typed dataclasses, one module per stage (``corpus``, ``index``, ``serving``, ``eval`` and its
``agent``), gathered in ``run.SwsConfig``; ``loader`` reads profiles and ``key=value`` overrides for the CLI,
the Ray jobs and the Serve application builders alike, and ``flags`` declares the command-line flags that
set keys of them.
"""

from sws.config.agent import TOOL_CHOICES, AgentConfig
from sws.config.corpus import ChunkConfig, CleanConfig, CorpusConfig, DumpConfig
from sws.config.eval import EvalConfig
from sws.config.index import DenseIndexConfig, EmbedderConfig, EmbedJobConfig, IndexConfig, KeywordIndexConfig
from sws.config.loader import (
    PROFILES_DIR,
    apply_overrides,
    bundled_sample_dump,
    load_config,
    load_section,
    merge_section,
    profile_section,
    to_dict,
)
from sws.config.run import RayConfig, SwsConfig
from sws.config.serving import (
    CLUSTER_REPLICAS,
    DEFAULT_PORT,
    INGRESS_MODES,
    AutoscalingSettings,
    LLMServeConfig,
    QueryEmbeddingConfig,
    RetrieveSettings,
    ServeConfig,
    ToolClientConfig,
    ToolOptions,
)

__all__ = [
    "CLUSTER_REPLICAS",
    "DEFAULT_PORT",
    "INGRESS_MODES",
    "PROFILES_DIR",
    "TOOL_CHOICES",
    "AgentConfig",
    "AutoscalingSettings",
    "ChunkConfig",
    "CleanConfig",
    "CorpusConfig",
    "DenseIndexConfig",
    "DumpConfig",
    "EmbedJobConfig",
    "EmbedderConfig",
    "EvalConfig",
    "IndexConfig",
    "KeywordIndexConfig",
    "LLMServeConfig",
    "QueryEmbeddingConfig",
    "RayConfig",
    "RetrieveSettings",
    "ServeConfig",
    "SwsConfig",
    "ToolClientConfig",
    "ToolOptions",
    "apply_overrides",
    "bundled_sample_dump",
    "load_config",
    "load_section",
    "merge_section",
    "profile_section",
    "to_dict",
]
