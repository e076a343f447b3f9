"""``sws build …``: the corpus (and, registered by their modules, the later stages)."""

from __future__ import annotations

import json

import click

from sws import stages
from sws.cli.job import in_job
from sws.cli.options import config_option, flag_options, one_line_errors, overrides_argument, resolve_flags
from sws.config import flags
from sws.stopping import AGAIN, stops_on_signals


@click.group()
def build() -> None:
    """Build the corpus, embeddings and indexes."""


@build.command("corpus")
@flag_options(flags.BUILD_CORPUS)
@config_option
@overrides_argument
@stops_on_signals(lambda out=None, **_: f"the finished shards are kept in {out or 'corpus.out'}; {AGAIN}")
def corpus_command(profile, overrides, **values) -> None:
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
    cfg, given = resolve_flags(flags.BUILD_CORPUS, profile, overrides, values)
    dumps, index_paths = given["dumps"], given["index_paths"]
    if given["old_index_paths"]:
        click.echo("warning: --index is deprecated here, use --multistream-index", err=True)
        index_paths += given["old_index_paths"]
    if dumps:
        stages.use_dumps(
            cfg, dumps, index_paths, any(o.startswith("dump.fetch_manifest=") for o in overrides)
        )
    elif index_paths:
        raise click.UsageError("--multistream-index needs the matching --dump")
    with one_line_errors():
        manifest = stages.build_corpus(cfg, cfg.corpus.out, progress=not in_job())
        click.echo(json.dumps(stages.corpus_summary(manifest), indent=1))
        stages.check_corpus_complete(manifest)
