"""OmegaConf structured configs: the single description of a run.

A run's config is a profile YAML (``configs/local.yaml``, ``configs/paper.yaml`` or any file) merged over the
dataclass defaults below, then ``key=value`` overrides from the command line. Library classes never see these
objects: entrypoints unpack them into plain keyword arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from omegaconf import OmegaConf

from sws.eval.config import EvalConfig
from sws.index.config import EmbedderConfig, EmbedJobConfig, IndexConfig
from sws.serving_config import LLMServeConfig, ServeConfig, ToolClientConfig

PROFILES_DIR = Path(__file__).parent / "configs"


@dataclass
class DumpConfig:
    """Where the pages come from."""

    paths: list[str] = field(default_factory=list)  # .xml, .xml.bz2, multistream .xml.bz2 or split files
    index_paths: list[str] = field(default_factory=list)  # multistream -index.txt.bz2, same order as paths
    streams_per_shard: int = 20  # multistream bz2 streams (100 pages each) per parallel work unit
    fetch_manifest: str | None = None  # fetch-manifest.json whose checksums the build verifies


@dataclass
class CleanConfig:
    """Wikitext -> lightweight Markdown."""

    infobox: bool = True  # render the infobox as a key/value table at the top of the preamble
    tables: bool = True
    drop_disambiguation: bool = False
    drop_sections: list[str] = field(
        default_factory=lambda: [
            "References",
            "External links",
            "Further reading",
            "Notes",
            "See also",
            "Bibliography",
            "Sources",
            "Citations",
            "Footnotes",
            "Notes and references",
            "References and notes",
            "Works cited",
            "Explanatory notes",
            "General references",
            "External sources",
        ]
    )
    max_page_chars: int = 3_000_000  # larger pages go straight to the plain-text fallback
    page_timeout_s: float = 10.0  # per-page budget for the Markdown converter before the fallback
    max_template_depth: int = 30


@dataclass
class ChunkConfig:
    """Section-aware token chunking."""

    tokenizer: str = "qwen3"  # "qwen3" (tiktoken ranks) or a tokenizer.json path / Hugging Face name
    target_tokens: int = 1536
    tolerance: float = 0.2  # band: target * (1 - tol) .. target * (1 + tol)


@dataclass
class RayConfig:
    address: str | None = None  # None: start a local Ray; "auto": join the running cluster
    num_cpus: int | None = None  # local Ray only
    workers: int | None = None  # corpus actor-pool size; None: one per available CPU


@dataclass
class CorpusConfig:
    out: str = "sws-out/corpus"


@dataclass
class SwsConfig:
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


def bundled_sample_dump() -> str:
    """Path of the enwiki sample dump shipped inside the package (the embedded default)."""
    return str(resources.files("sws") / "data" / "enwiki-sample.xml.bz2")


def load_config(profile: str = "local", overrides: list[str] | tuple[str, ...] = ()) -> SwsConfig:
    """Merge a profile (a name in ``sws/configs`` or a YAML path) and ``key=value`` overrides over the defaults.

    Raises:
        ValueError: unknown profile, unknown key or a value of the wrong type.
    """
    path = Path(profile)
    if not path.suffix:
        path = PROFILES_DIR / f"{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))
        raise ValueError(f"config profile {profile!r} not found (known: {', '.join(known)}, or a .yaml path)")
    bad = [o for o in overrides if "=" not in o]
    if bad:
        raise ValueError(f"overrides must look like key=value, got {bad}")
    schema = OmegaConf.structured(SwsConfig)
    try:
        merged = OmegaConf.merge(schema, OmegaConf.load(path), OmegaConf.from_dotlist(list(overrides)))
    except Exception as exc:  # omegaconf raises several error types; all mean "bad config"
        raise ValueError(f"invalid config ({path.name}): {exc}") from exc
    if not merged.dump.paths:
        merged.dump.paths = [bundled_sample_dump()]
    return OmegaConf.to_object(merged)


def to_dict(cfg: SwsConfig) -> dict:
    """The resolved config as plain data (saved next to every output)."""
    return OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True)
