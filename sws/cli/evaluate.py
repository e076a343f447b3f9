"""``sws eval`` (episodes on Ray actors against any OpenAI-compatible endpoint) and ``sws report``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sws import stages
from sws.cli.options import config_option, flag_options, one_line_errors, overrides_argument, resolve_flags
from sws.config import flags
from sws.config.flags import OUT_DIR
from sws.stopping import AGAIN, stops_on_signals


@click.command("eval")
@flag_options(flags.EVAL)
@config_option
@overrides_argument
@stops_on_signals(lambda out=None, **_: f"the finished episodes are recorded in {out or 'eval.out'}; {AGAIN}")
def eval_command(profile, overrides, **values):
    """Run the agent on a QA set: 20 rounds, at most 5 tool calls per step, results streamed to Parquet.

    Re-running the same command resumes (finished ids skipped, errored ids retried); a directory of another
    dataset file, subset, sampling seed, item selection, environment fingerprint, model or sampling config is
    refused (more items only with --extend), so is one another `sws eval` is running in, and one with a
    damaged part file unless --repair is given. SIGINT/SIGTERM record what has finished and exit 130/143.

    \b
    Examples:
      sws eval --dataset bamboogle --data bamboogle_test.jsonl --limit 20          # heuristic baseline
      sws eval --dataset hotpotqa --data hotpotqa_dev.json --subset random_300 \\
               --llm-base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen3.5-9B --tools-url http://127.0.0.1:11536
    """
    cfg, arguments = resolve_flags(flags.EVAL, profile, overrides, values)
    with one_line_errors():
        summary = stages.evaluate(cfg, **arguments)
    click.echo(json.dumps(summary, indent=1))


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
@click.option(
    "--disable-n", is_flag=True, help="The reference-format table without its n columns (as its --disable_n)."
)
def report_command(run_dirs, out, no_plots, repair, disable_n) -> None:
    """Regenerate the paper's Tables 3-6 (Markdown, CSV, LaTeX) and tool-use plots from saved results.

    RUN_DIRS are sws results directories (or folders of them) and the reference's output trees
    (<root>/<Dataset>/<model>/<qid>.json, such as output_full_test/, a folder holding such trees, or one
    <Dataset>/<model> folder). For a reference tree the table its scripts/print_qa_benchmark_md_table.py
    prints is printed too (written to reference_table.md), and every file it could not use is named.

    A damaged part file stops the report; with --repair it is moved aside and its episodes count as missing
    until `sws eval` on that run records them again.

    \b
    Examples:
      sws report sws-out/eval
      sws report output_full_test output_sample_random_300 --disable-n
    """
    from sws.eval.reference_runs import find_reference_trees
    from sws.eval.report import find_runs, write_report

    found = find_runs(run_dirs)
    trees = find_reference_trees(run_dirs)
    if not found and not trees:
        raise click.ClickException(
            f"no results (run.json) and no reference output tree under {', '.join(run_dirs)}"
        )
    stats = _sws_stats(found, repair)
    reference = _reference_report(trees, disable_n)
    stats += [run.stats() for tree in reference[0] for run in tree.runs]
    paths = write_report(stats, out, plots=not no_plots)
    click.echo((Path(out) / "report.md").read_text())
    if trees:
        table = Path(out) / "reference_table.md"
        table.write_text(reference[1], encoding="utf-8")
        paths.append(table)
        click.echo(reference[1], nl=False)
    click.echo("\n".join(f"wrote {p}" for p in paths), err=True)


def _sws_stats(found, repair):
    """The statistics of sws results directories (damaged parts moved aside first with ``repair``)."""
    from sws.eval.report import run_stats
    from sws.eval.results import DamagedPartError, move_damaged_parts
    from sws.eval.run_meta import DamagedRunError

    moved = [m for d in found for m in move_damaged_parts(d)] if repair else []
    for path in moved:
        click.echo(
            f"moved damaged part {path} aside; rerunning `sws eval` on that run records its episodes",
            err=True,
        )
    try:
        return [run_stats(d) for d in found]
    except DamagedPartError as exc:
        raise click.ClickException(
            f"{exc}; rerun with --repair to move it to {exc.path.parent.parent / 'damaged'} and report the "
            "rest (its episodes count as missing until `sws eval` on that run records them again)"
        ) from exc
    except DamagedRunError as exc:
        raise click.ClickException(
            f"{exc}; fix it, or move that run out of the directories reported"
        ) from exc


def _reference_report(trees, disable_n):
    """The reference trees read (their problems printed, one line per kind) and the reference script's
    table for them."""
    from sws.eval.reference_runs import read_reference
    from sws.eval.reference_table import reference_tables

    read = [read_reference(path) for path in trees]
    for tree in read:
        for line in tree.problem_lines():
            click.echo(f"reference tree: {line}", err=True)
    return read, reference_tables(read, disable_n)
