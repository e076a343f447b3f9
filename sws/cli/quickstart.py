"""``sws quickstart``: the whole chain on the embedded default (the bundled sample dump, local Ray, CPU)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import click

from sws import stages
from sws.cli.index import open_tools
from sws.cli.options import OUT_DIR, config_option, one_line_errors, overrides_argument, resolve_config

DEMO_SEARCHES = (
    {"query": "anarchism political philosophy", "top_k": 3},
    {"query": "Who directed the film Actrius?", "top_k": 2, "method": "keywords"},
    {"query": "Alabama", "top_k": 3, "only_title": True},
)


@click.command()
@click.option(
    "--out", type=OUT_DIR, default="sws-out", show_default=True, help="Working directory for all outputs."
)
@click.option("--questions", default=20, show_default=True, help="Bamboogle questions to evaluate (0: skip).")
@config_option
@overrides_argument
def quickstart(out, questions, profile, overrides) -> None:
    """Build the corpus and indexes of the bundled sample, show what the model sees, serve the tools, and
    evaluate the agent on real Bamboogle questions through the service (against ``eval.llm_base_url`` if set,
    else the no-LLM heuristic baseline) and print the paper's tables."""
    cfg = resolve_config(profile, overrides)
    corpus_dir, index_dir = Path(out) / "corpus", Path(out) / "index"
    click.echo(f"[1/5] corpus: {', '.join(Path(p).name for p in cfg.dump.paths)} -> {corpus_dir}")
    with one_line_errors():
        manifest = stages.build_corpus(cfg, str(corpus_dir))
        stages.check_corpus_complete(manifest)
        click.echo(json.dumps(stages.corpus_summary(manifest), indent=1))
        click.echo(f"\n[2/5] indexes: Tantivy + FAISS HNSW ({cfg.embedder.model} embeddings) -> {index_dir}")
        index = stages.build_index(cfg, str(corpus_dir), str(index_dir))
    click.echo(f"{index['corpus']['chunks']} chunks indexed, fingerprint {index['fingerprint']}")
    click.echo("\n[3/5] the tools, as the model sees them")
    tools = open_tools(str(index_dir))
    for arguments in DEMO_SEARCHES:
        _show(tools, "search", arguments)
    _show(tools, "open_url", {"url": "https://en.wikipedia.org/wiki/Actrius#chunk-1"})
    if questions:
        with _served(str(index_dir), Path(out)) as url:
            cfg.tools.transport, cfg.tools.url = "http", url
            _evaluate(cfg, Path(out), str(index_dir), questions)


@contextlib.contextmanager
def _served(index_dir: str, out: Path):
    """``sws serve`` over the index in a child process (its own local Ray) for the evaluation's tool calls."""
    from sws.cli.serve import _serve_package

    click.echo("\n[4/5] serving the tools on Ray Serve (127.0.0.1, HTTP + MCP + handle API)")
    with _serve_package().ServeProcess(
        index_dir, args=["--replicas", "1"], log_path=out / "serve.log"
    ) as server:
        click.echo(f"retrieval service ready at {server.url} (log: {out / 'serve.log'})")
        yield server.url


def _evaluate(cfg, out: Path, index_dir: str, questions: int) -> None:
    from importlib import resources

    from sws.eval.report import collect, report_tables

    data = str(resources.files("sws") / "data" / "bamboogle_test.flashrag.jsonl")
    click.echo(
        f"\n[5/5] evaluation: {questions} Bamboogle questions, episodes on Ray actors, tools over HTTP"
    )
    with one_line_errors():
        result = stages.evaluate(
            cfg,
            dataset="bamboogle",
            data_path=data,
            subset="full_test",
            out=str(out / "runs" / "bamboogle"),
            index_dir=index_dir,
            limit=questions,
            extend=True,  # a rerun with more --questions adds them to the run
        )
    click.echo(json.dumps(result, indent=1))
    for table in report_tables(collect([out / "runs"])):
        click.echo("\n" + table.markdown())


def _show(tools, name: str, arguments: dict) -> None:
    click.echo(f"\n>>> {name}({json.dumps(arguments, ensure_ascii=False)})\n")
    click.echo(tools.call_tool(name, json.dumps(arguments)))
