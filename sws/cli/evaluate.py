"""``sws eval`` (episodes on Ray actors against any OpenAI-compatible endpoint) and ``sws report``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path

import click

from sws.cli.index import verify_index_files
from sws.cli.options import OUT_DIR, config_option, overrides_argument, resolve_config, verify_option


@click.command("eval")
@click.option(
    "--dataset", required=True, help="2wikimultihopqa, hotpotqa, musique, frames, popqa or bamboogle."
)
@click.option(
    "--data", "data_path", required=True, type=click.Path(exists=True, dir_okay=False), help="QA file."
)
@click.option("--subset", help="full_test, random_300 or an id-list file (default: eval.subset).")
@click.option("--llm-base-url", help="OpenAI-compatible base URL (default: the no-LLM heuristic baseline).")
@click.option("--model", help="Model name at that endpoint.")
@click.option(
    "--out", type=OUT_DIR, help="Results directory (default: <eval.out>/<dataset>-<subset>-<model>)."
)
@click.option("--index", "index_dir", help="Index for in-process tools (default: index.out).")
@click.option(
    "--tools-url", help="Use the retrieval service at this URL (POST /call) instead of in-process tools."
)
@click.option("--limit", type=int, help="Only the first N items of the subset (smoke runs).")
@click.option(
    "--repair",
    is_flag=True,
    help="Move unreadable part files to <out>/damaged/ (kept, not deleted) and run their episodes again.",
)
@verify_option
@config_option
@overrides_argument
def eval_command(
    dataset,
    data_path,
    subset,
    llm_base_url,
    model,
    out,
    index_dir,
    tools_url,
    limit,
    repair,
    verify,
    profile,
    overrides,
):
    """Run the agent on a QA set: 20 rounds, at most 5 tool calls per step, results streamed to Parquet.

    Re-running the same command resumes (finished ids skipped, errored ids retried); a directory of another
    environment fingerprint, model or sampling config is refused, and so is one with a damaged part file
    unless --repair is given.

    \b
    Examples:
      sws eval --dataset bamboogle --data bamboogle_test.jsonl --limit 20          # heuristic baseline
      sws eval --dataset hotpotqa --data hotpotqa_dev.json --subset random_300 \\
               --llm-base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://127.0.0.1:11536
    """
    cfg = resolve_config(profile, overrides)
    e = cfg.eval
    if tools_url:
        cfg.tools.transport, cfg.tools.url = "http", tools_url
    cfg.index.verify_on_open |= verify
    summary = run_eval(
        cfg,
        dataset=dataset,
        data_path=data_path,
        subset=subset or e.subset,
        llm_base_url=llm_base_url or e.llm_base_url,
        model=model or e.model,
        out=out,
        index_dir=index_dir or cfg.tools.index or cfg.index.out,
        limit=limit,
        repair=repair,
    )
    click.echo(json.dumps(summary, indent=1))


def run_eval(
    cfg, *, dataset, data_path, subset, llm_base_url, model, out, index_dir, limit=None, repair=False
) -> dict:
    """Load and select the items, reach the tools and the LLM as configured, run the episodes; a summary.

    In process, ``index.verify_on_open`` checks the index files' checksums here, once, before the workers
    open the index (sizes only).
    """
    from sws.agent import HEURISTIC_MODEL, AgentConfig
    from sws.eval.datasets import DatasetError, canonical_dataset, load_dataset, select
    from sws.eval.results import DamagedPartError, RunMismatchError
    from sws.eval.runner import run_evaluation
    from sws.raykit import init_ray
    from sws.transport import tool_client_factory

    e = cfg.eval
    try:
        dataset = canonical_dataset(dataset)
        items = select(load_dataset(data_path, dataset), subset, seed=e.seed)[:limit]
    except DatasetError as exc:
        raise click.ClickException(str(exc)) from exc
    if cfg.index.verify_on_open and cfg.tools.transport == "inprocess":
        verify_index_files(cfg.tools.index or index_dir)
    with _llm_endpoint(llm_base_url, index_dir) as base_url:
        model = model or (HEURISTIC_MODEL if base_url != llm_base_url else None)
        if not model:
            raise click.UsageError("--model is required with --llm-base-url")
        out = out or str(Path(e.out) / f"{dataset}-{Path(subset).stem}-{model.replace('/', '_')}")
        init_ray(cfg.ray.address, cfg.ray.num_cpus)
        judge = None
        if e.judge:
            judge = {
                "model": e.judge_model,
                "base_url": e.judge_base_url,
                "variant": e.judge_variant,
                "api_key": os.environ.get(e.judge_api_key_env),
            }
        try:
            summary = run_evaluation(
                items,
                out,
                config=AgentConfig(model=model),
                llm={
                    "base_url": base_url,
                    "api_key": os.environ.get(e.api_key_env, "EMPTY"),
                    "max_concurrency": e.max_concurrency,
                    "timeout": e.timeout_s,
                },
                tools_factory=tool_client_factory(cfg.tools, index=index_dir),
                fingerprint=environment_fingerprint(cfg.tools, index_dir),
                judge=judge,
                dataset=dataset,
                subset=subset,
                workers=e.workers,
                episodes_per_worker=e.episodes_per_worker,
                worker_num_cpus=e.worker_num_cpus,
                repair=repair,
            )
        except RunMismatchError as exc:
            raise click.ClickException(str(exc)) from exc
        except DamagedPartError as exc:
            raise click.ClickException(
                f"{exc}; rerun with --repair to move damaged parts to {Path(out) / 'damaged'} and run their "
                "episodes again"
            ) from exc
    return {"out": out, "model": model, **dataclasses.asdict(summary)}


@contextlib.contextmanager
def _llm_endpoint(base_url: str | None, index_dir: str):
    """The given endpoint, or the scripted heuristic baseline on 127.0.0.1 (search, open, submit; no LLM)."""
    if base_url:
        yield base_url
        return
    from sws.agent.scripted_server import ScriptedLLMServer

    click.echo("no --llm-base-url: running the heuristic baseline (no LLM), labelled as such", err=True)
    with ScriptedLLMServer(policy="heuristic") as server:
        yield server.url


def environment_fingerprint(tools_cfg, index_dir: str) -> str:
    """The fingerprint of the environment the episodes see: the index's (in process) or the service's."""
    import httpx

    from sws.manifest import read_manifest

    if tools_cfg.transport == "http":
        info = httpx.get(f"{tools_cfg.url.rstrip('/')}/info", timeout=30).json()
        return info.get("fingerprint") or info.get("index", {}).get("fingerprint") or "unknown"
    return read_manifest(index_dir)["fingerprint"]


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--out", type=OUT_DIR, default="sws-out/report", show_default=True, help="Where tables and plots go."
)
@click.option("--no-plots", is_flag=True)
@click.option(
    "--repair",
    is_flag=True,
    help="Move unreadable part files to <run>/damaged/ (kept); their episodes count as missing.",
)
def report_command(run_dirs, out, no_plots, repair) -> None:
    """Regenerate the paper's Tables 3-6 (Markdown, CSV, LaTeX) and tool-use plots from saved results.

    A damaged part file stops the report; with --repair it is moved aside and its episodes count as missing
    until `sws eval` on that run records them again.
    """
    from sws.eval.report import find_runs, run_stats, write_report
    from sws.eval.results import DamagedPartError, move_damaged_parts

    found = find_runs(run_dirs)
    if not found:
        raise click.ClickException(f"no results (run.json) under {', '.join(run_dirs)}")
    moved = [m for d in found for m in move_damaged_parts(d)] if repair else []
    for path in moved:
        click.echo(
            f"moved damaged part {path} aside; rerunning `sws eval` on that run records its episodes",
            err=True,
        )
    try:
        stats = [run_stats(d) for d in found]
    except DamagedPartError as exc:
        raise click.ClickException(
            f"{exc}; rerun with --repair to move it to {exc.path.parent.parent / 'damaged'} and report the "
            "rest (its episodes count as missing until `sws eval` on that run records them again)"
        ) from exc
    paths = write_report(stats, out, plots=not no_plots)
    click.echo((Path(out) / "report.md").read_text())
    click.echo("\n".join(f"wrote {p}" for p in paths), err=True)
