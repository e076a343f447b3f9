"""``sws compare A B``: two runs question by question, optionally B's tool calls replayed against an environment."""

from __future__ import annotations

import os
from pathlib import Path

import click

from sws.cli.options import one_line_errors
from sws.config.flags import OUT_DIR


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option(
    "--out", type=OUT_DIR, default="sws-out/compare", show_default=True, help="Where the outputs go."
)
@click.option(
    "--replay",
    "env",
    metavar="ENV",
    help="Issue every recorded tool call of B again against ENV (an index directory, opened here, or the URL "
    "of a running `sws serve`) and diff the observations.",
)
@click.option(
    "--token-env",
    default="SWS_SERVE_TOKEN",
    show_default=True,
    help="--replay URL: bearer token from this variable.",
)
@click.option("--model", help="Compare this model's records only (a side may hold several: a whole tree).")
@click.option("--seed", default=42, show_default=True, help="The bootstrap's seed.")
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(min=100))
@click.option(
    "--show",
    default=5,
    show_default=True,
    type=click.IntRange(min=0),
    help="Differing replayed calls shown with both texts.",
)
@click.option("--no-plots", is_flag=True)
def compare_command(a, b, out, env, token_env, model, seed, resamples, show, no_plots) -> None:
    """Compare two runs question by question (Δ = B − A): F1, EM, judge flips, stop reasons, rounds, calls,
    tokens, runtime, with a paired bootstrap 95 % interval of each mean Δ; questions on one side only are
    listed. A and B are each an sws run (or a folder of runs of one model) or a reference output tree
    (<Dataset>/<model>/<qid>.json). Writes compare.md (printed), compare.csv, compare.json and compare.png.

    \b
    Examples:
      sws compare sws-out/eval/bamboogle-full_test-m output_full_test/Bamboogle/m
      sws compare A B --replay sws-out/index          # is the index the one B's observations came from?
      sws compare A B --replay http://127.0.0.1:11536
    """
    from sws.eval.compare import CompareError, compare_sides, load_side
    from sws.eval.compare_report import write_comparison
    from sws.eval.replay import ReplayError, open_environment, replay_calls

    try:
        comparison = compare_sides(load_side(a, model), load_side(b, model), seed, resamples)
        replayed = None
        if env:
            tools = open_environment(env, os.environ.get(token_env) or None)
            try:
                replayed = replay_calls(comparison.b.records.values(), tools, env, show)
            finally:
                tools.close()
    except (CompareError, ReplayError) as exc:
        raise click.ClickException(str(exc)) from exc
    with one_line_errors():  # a full disk, a folder it may not write
        paths = write_comparison(comparison, out, replayed, plots=not no_plots)
    click.echo((Path(out) / "compare.md").read_text(encoding="utf-8"))
    click.echo("\n".join(f"wrote {p}" for p in paths), err=True)
