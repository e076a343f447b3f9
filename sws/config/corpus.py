"""The corpus build's sections: ``dump``, ``clean``, ``chunk`` and ``corpus`` (``sws build corpus``)."""

from __future__ import annotations

from dataclasses import dataclass, field


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

    tokenizer: str = "qwen3"  # "qwen3" (the qwen.tiktoken ranks) or a tokenizer.json path / Hugging Face name
    target_tokens: int = 1536
    tolerance: float = 0.2  # band: target * (1 - tol) .. target * (1 + tol)


@dataclass
class CorpusConfig:
    out: str = "sws-out/corpus"
