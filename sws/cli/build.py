"""``sws build …``: the corpus (and, registered by their modules, the later stages)."""

from __future__ import annotations

import json

import click

from sws import stages
from sws.cli.options import (
    INPUT_FILE,
    OUT_DIR,
    config_option,
    one_line_errors,
    overrides_argument,
    resolve_config,
)


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
    "--multistream-index",
    "index_paths",
    multiple=True,
    type=INPUT_FILE,
    help="Multistream -index.txt.bz2, paired with --dump.",
)
@click.option("--index", "old_index_paths", multiple=True, type=INPUT_FILE, hidden=True)  # deprecated alias
@click.option("--out", type=OUT_DIR, help="Output directory (default: corpus.out of the config).")
@config_option
@overrides_argument
def corpus_command(dumps, index_paths, old_index_paths, out, profile, overrides) -> None:
    """Wikipedia dump -> cleaned Markdown -> section-aware token chunks (Parquet + manifest.json).

    Inputs listed in a fetch manifest (dump.fetch_manifest, else a fetch-manifest.json next to the dump, as
    `sws fetch dump` writes it) must match its recorded size and sha1/md5, or the build refuses to start.

    \b
    Examples:
      sws build corpus                                   # the bundled sample
      sws build corpus --dump enwiki-…-multistream.xml.bz2 --multistream-index enwiki-…-index.txt.bz2 \\
                       --out corpus/
      sws build corpus -c paper ray.address=auto
    """
    if old_index_paths:
        click.echo("warning: --index is deprecated here, use --multistream-index", err=True)
        index_paths += old_index_paths
    cfg = resolve_config(profile, overrides)
    if dumps:
        stages.use_dumps(
            cfg, dumps, index_paths, any(o.startswith("dump.fetch_manifest=") for o in overrides)
        )
    elif index_paths:
        raise click.UsageError("--multistream-index needs the matching --dump")
    with one_line_errors():
        manifest = stages.build_corpus(cfg, out or cfg.corpus.out)
        click.echo(json.dumps(stages.corpus_summary(manifest), indent=1))
        stages.check_corpus_complete(manifest)
