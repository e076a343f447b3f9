"""``sws build embed``, ``sws build index``, ``sws search`` and ``sws open``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sws import stages
from sws.cli.options import (
    config_option,
    flag_options,
    one_line_errors,
    overrides_argument,
    resolve_flags,
    verify_option,
)
from sws.config import flags
from sws.config.flags import flag_settings
from sws.stopping import AGAIN, stops_on_signals
from sws.types import SEARCH_METHODS

index_option = click.option(
    "--index",
    "index_dir",
    required=True,
    envvar="SWS_INDEX",
    type=click.Path(file_okay=False),
    help="Index directory (from `sws build index`; env SWS_INDEX).",
)


@click.command("embed")
@flag_options(flags.EMBED)
@config_option
@overrides_argument
@stops_on_signals(
    lambda out=None, **_: f"the finished vector units are kept in {out or 'embed.out'}; {AGAIN}"
)
def embed_command(profile, overrides, **values) -> None:
    """Embed every chunk of a corpus into vector shards (Ray Data actor pool; resumable).

    \b
    Examples:
      sws build embed --corpus sws-out/corpus --out sws-out/vectors
      sws build embed -c paper embed.workers=8 embed.num_gpus=1
    """
    cfg, _ = resolve_flags(flags.EMBED, profile, overrides, values)
    with one_line_errors():
        vectors = stages.embed(cfg, cfg.corpus.out, cfg.embed.out)
    m = vectors.manifest
    click.echo(
        json.dumps({k: m[k] for k in ("fingerprint", "rows", "dim", "dtype", "tokens", "last_run")}, indent=1)
    )


@click.command("index")
@flag_options(flags.BUILD_INDEX)
@config_option
@overrides_argument
@stops_on_signals(
    lambda out=None, **_: f"the finished vectors and parts are kept in {out or 'index.out'}; {AGAIN}"
)
def build_index_command(profile, overrides, **values) -> None:
    """Build the Tantivy (chunks, titles, redirects) and FAISS HNSW indexes with their manifest.

    Resumable: parts built from the same inputs are kept. Over an existing index, changed parts are built
    beside it and swapped in once complete, so it stays searchable meanwhile; a refused build changes nothing.

    \b
    Examples:
      sws build index --corpus sws-out/corpus --out sws-out/index
      sws build index --vectors sws-out/vectors index.dense.m=48
    """
    cfg, _ = resolve_flags(flags.BUILD_INDEX, profile, overrides, values)
    with one_line_errors():
        manifest = stages.build_index(cfg, cfg.corpus.out, cfg.index.out, cfg.index.vectors)
    click.echo(json.dumps(stages.index_summary(manifest), indent=1))


@click.command("search")
@index_option
@click.argument("query")
@click.option("--method", type=click.Choice(SEARCH_METHODS), default="rrf", show_default=True)
@click.option("--top-k", type=int, default=10, show_default=True)
@click.option("--only-title", is_flag=True, help="Search article titles only.")
@verify_option
@flag_options(flags.SEARCH)
def search_command(index_dir, query, method, top_k, only_title, verify, embedding_endpoint) -> None:
    """Print the search observation exactly as the model sees it.

    \b
    Examples:
      sws search --index sws-out/index "Who founded KickassTorrents?"
      sws search --index sws-out/index '"restriction enzyme"' --method keywords --top-k 3
      sws search --index sws-out/paper-index "Who founded KickassTorrents?" --embedding-endpoint http://127.0.0.1:17000
    """
    args = {"query": query, "top_k": top_k, "only_title": only_title, "method": method}
    click.echo(open_tools(index_dir, verify, embedding_endpoint).call_tool("search", json.dumps(args)))


@click.command("open")
@index_option
@click.argument("url")
@verify_option
def open_command(index_dir, url, verify) -> None:
    """Print the open_url observation exactly as the model sees it.

    \b
    Examples:
      sws open --index sws-out/index "https://en.wikipedia.org/wiki/12#chunk-2"
      sws open --index sws-out/index https://en.wikipedia.org/wiki/Anarchism
    """
    click.echo(open_tools(index_dir, verify).call_tool("open_url", json.dumps({"url": url})))


@click.group("index")
def index_group() -> None:
    """Check a built index, export it in another layout, or import the paper's released index."""


@index_group.command("verify")
@click.argument("index_dir", type=click.Path(file_okay=False))
def verify_command(index_dir) -> None:
    """Check every index file's size and checksum against the manifest; exit 1 naming each damaged file.

    \b
    Examples:
      sws index verify sws-out/index
    """
    with one_line_errors():
        summary = stages.verify_index_files(index_dir, require_checksums=True)
    click.echo(json.dumps({**summary, "status": "ok"}, indent=1))


@index_group.command("export")
@click.argument("index_dir", type=click.Path(file_okay=False))
@flag_options(flags.EXPORT_INDEX)
def export_command(index_dir, **values) -> None:
    """Write a built index in another layout; `--format reference`: the paper's, which its own tool server
    reads (tantivy/chunk-1536/{chunks,titles}, faiss/hnsw-<model>-chunk-1536-fp16/{index.faiss,ids.pkl}).

    \b
    Examples:
      sws index export sws-out/index --out sws-out/reference --format reference
      sws index export sws-out/index --out /tmp/ref-l2 --format reference --metric l2
    """
    _, stage = flag_settings(flags.EXPORT_INDEX, values)
    with one_line_errors():
        summary = stages.export_index(index_dir, **stage)
    click.echo(json.dumps(summary, indent=1))


def _import_kept(sources=(), out=None, **_) -> str:
    """What an interrupted ``sws index import`` keeps: the archive members extracted whole, or nothing."""
    from sws.index.reference.adopt import partial_dir

    if out and any(not Path(source).is_dir() for source in sources):
        return f"the archive members extracted whole are kept in {partial_dir(out)}; {AGAIN}"
    return f"nothing of {out} was written; run the same command again"


@index_group.command("import")
@click.argument("sources", nargs=-1, required=True, type=click.Path(), metavar="SRC [SRC2]")
@flag_options(flags.IMPORT_INDEX)
@stops_on_signals(_import_kept)
def import_command(sources, **values) -> None:
    """Adopt the paper's released index, in its reference layout (tantivy/chunk-1536/{chunks,titles},
    faiss/<name>/{index.faiss,ids.pkl}), as an sws index: its files hard-linked, never silently copied, and a
    manifest beside them; `sws search`, `sws open`, `sws serve` then open it as any index.

    SRC is one folder in the whole layout; or give its two parts apart, in either order: the Tantivy part
    (a folder holding tantivy/chunk-1536/, chunk-1536/ or chunks/ and titles/ themselves) and the FAISS part (a
    folder holding faiss/<name>/, <name>/ or index.faiss and ids.pkl themselves), each as a folder or as the
    paper's .tar.zst archive of it. An archive is read streamed, its members written straight into the index's
    partial folder (.IDX.partial beside it; the archive stays as it is); interrupted (Ctrl-C, SIGTERM) or
    refused, the members extracted whole are kept there, and the same command again resumes. A damaged or
    unsafe archive is refused in one line naming the member.

    \b
    Examples:
      sws index import /data/enwiki-20260601 --out sws-out/paper-index
      sws index import enwiki-20260601-tantivy-chunk-1536.tar.zst \\
          enwiki-20260601-faiss-hnsw-Qwen3-Embedding-0.6B.tar.zst --out sws-out/paper-index
      sws index import /data/tantivy /data/faiss --out sws-out/paper-index
      sws index import sws-out/reference --out sws-out/ref-index --embedder-spec '{"kind": "sentence-transformers", "model": "all-MiniLM-L6-v2", "query_task": ""}'
    """
    if len(sources) > 2:
        raise click.UsageError(
            f"{len(sources)} sources: give one folder in the reference's layout, or its Tantivy and FAISS parts"
        )
    _, stage = flag_settings(flags.IMPORT_INDEX, values)
    with one_line_errors():
        summary = stages.import_index(sources, **stage)
    click.echo(json.dumps(summary, indent=1))


class CliTools:
    """The model-facing tools in process, for the CLI: a failing index or embedder is a one-line error
    (exit 1), never an observation that blames the arguments."""

    def __init__(self, tools, index_dir: str):
        self.tools, self.index_dir = tools, index_dir

    def call_tool(self, name: str, arguments_json: str) -> str:
        from sws.env import FatalToolError

        try:
            return self.tools.call_tool(name, arguments_json)
        except FatalToolError as exc:
            raise click.ClickException(
                f"{exc} (the index or embedder failed; `sws index verify {self.index_dir}` checks the files)"
            ) from exc


def open_tools(index_dir: str, verify: bool = False, embedding_endpoint: str | None = None) -> CliTools:
    """The model-facing tools over an index directory, in process (``verify``: check checksums first;
    ``embedding_endpoint``: embed queries at that ``/v1/embeddings`` server, checked now)."""
    from sws.index import SwsIndexError
    from sws.transport import InProcessTools

    try:
        tools = InProcessTools.open(Path(index_dir), verify=verify, embedding_endpoint=embedding_endpoint)
        return CliTools(tools, index_dir)
    except SwsIndexError as exc:
        raise click.ClickException(str(exc)) from exc
