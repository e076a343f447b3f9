"""``sws build …``: the corpus (and, registered by their modules, the later stages)."""

from __future__ import annotations

import json

import click

from sws.cli.options import INPUT_FILE, OUT_DIR, config_option, overrides_argument, resolve_config
from sws.config import SwsConfig, to_dict


@click.group()
def build() -> None:
    """Build the corpus, embeddings and indexes."""


@build.command("corpus")
@click.option(
    "--dump",
    "dumps",
    multiple=True,
    type=INPUT_FILE,
    help="Dump file (.xml, .xml.bz2, multistream); repeatable.",
)
@click.option(
    "--index",
    "index_paths",
    multiple=True,
    type=INPUT_FILE,
    help="Multistream -index.txt.bz2, paired with --dump.",
)
@click.option("--out", type=OUT_DIR, help="Output directory (default: corpus.out of the config).")
@config_option
@overrides_argument
def corpus_command(dumps, index_paths, out, profile, overrides) -> None:
    """Wikipedia dump -> cleaned Markdown -> section-aware token chunks (Parquet + manifest.json).

    Inputs listed in a fetch manifest (dump.fetch_manifest, else a fetch-manifest.json next to the dump, as
    `sws fetch dump` writes it) must match its recorded size and sha1/md5, or the build refuses to start.

    \b
    Examples:
      sws build corpus                                   # the bundled sample
      sws build corpus --dump enwiki-…-multistream.xml.bz2 --index enwiki-…-index.txt.bz2 --out corpus/
      sws build corpus -c paper ray.address=auto
    """
    cfg = resolve_config(profile, overrides)
    if dumps:
        cfg.dump.paths, cfg.dump.index_paths = list(dumps), list(index_paths)
        if not any(o.startswith("dump.fetch_manifest=") for o in overrides):
            cfg.dump.fetch_manifest = None  # the profile's manifest lists its own files: look next to these
    elif index_paths:
        raise click.UsageError("--index needs the matching --dump")
    manifest = run_corpus_build(cfg, out or cfg.corpus.out)
    click.echo(json.dumps(summary(manifest), indent=1))
    check_complete(manifest)


def run_corpus_build(cfg: SwsConfig, out: str, progress: bool = True) -> dict:
    """Start Ray as configured and build the corpus; library errors become one-line CLI errors."""
    from sws.corpus.build import CorpusBuildError, build_corpus
    from sws.raykit import init_ray

    init_ray(cfg.ray.address, cfg.ray.num_cpus)
    plain = to_dict(cfg)
    try:
        return build_corpus(
            cfg.dump.paths,
            out,
            clean=plain["clean"],
            chunk=plain["chunk"],
            index_paths=cfg.dump.index_paths,
            streams_per_shard=cfg.dump.streams_per_shard,
            workers=cfg.ray.workers,
            progress=progress,
            fetch_manifest=cfg.dump.fetch_manifest,
        )
    except CorpusBuildError as exc:
        raise click.ClickException(str(exc)) from exc


def summary(manifest: dict) -> dict:
    return {
        "fingerprint": manifest["fingerprint"],
        "complete": manifest["complete"],
        **{
            k: manifest["counts"][k]
            for k in ("pages", "articles", "redirects", "other_namespace", "skipped", "chunks", "tokens")
        },
        "input_errors": manifest["input_errors"],
        "rebuilt_shards": manifest["rebuilt_shards"],
        "wall_s": manifest["durations"]["wall_s"],
    }


def check_complete(manifest: dict) -> None:
    """Exit non-zero, with the reason, when the output is partial or empty."""
    if manifest["input_errors"]:
        first = manifest["input_errors"][0]
        raise click.ClickException(
            f"corpus is incomplete: {len(manifest['input_errors'])} input error(s), first in {first['unit']}: "
            f"{first['error']} (pages read before the error were kept; see manifest.json)"
        )
    if not manifest["counts"]["articles"]:
        raise click.ClickException(
            f"no articles found in the input ({manifest['counts']['pages']} pages read)"
        )
