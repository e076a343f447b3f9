"""``sws quickstart``: the whole chain on the embedded default (the bundled sample dump, local Ray, CPU)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sws.cli.build import check_complete, run_corpus_build, summary
from sws.cli.options import config_option, overrides_argument, resolve_config


@click.command()
@click.option("--out", default="sws-out", show_default=True, help="Working directory for all outputs.")
@config_option
@overrides_argument
def quickstart(out, profile, overrides) -> None:
    """Build the corpus of the bundled sample dump and print a summary."""
    cfg = resolve_config(profile, overrides)
    corpus_dir = Path(out) / "corpus"
    click.echo(f"[1/1] corpus: {', '.join(Path(p).name for p in cfg.dump.paths)} -> {corpus_dir}")
    manifest = run_corpus_build(cfg, str(corpus_dir))
    check_complete(manifest)
    click.echo(json.dumps(summary(manifest), indent=1))
    _show_sample_chunk(corpus_dir)


def _show_sample_chunk(corpus_dir: Path) -> None:
    import pyarrow.parquet as pq

    chunks = pq.read_table(corpus_dir / "chunks", columns=["chunk_id", "title", "n_tokens", "text"])
    row = chunks.slice(0, 1).to_pylist()[0]
    click.echo(f"\nfirst chunk {row['chunk_id']} of {row['title']!r} ({row['n_tokens']} tokens):\n")
    click.echo(row["text"][:600] + (" …" if len(row["text"]) > 600 else ""))
