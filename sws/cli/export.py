"""``sws export``: sws runs in another tool's format."""

from __future__ import annotations

import click

FORMATS = ("reference",)


@click.command("export")
@click.argument("run", type=click.Path(exists=True, file_okay=False))
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="reference",
    show_default=True,
    help="reference: the paper's <Dataset>/<model>/<qid>.json tree, read by its table script and runner.",
)
def export_command(run, out, fmt) -> None:
    """Write the sws run RUN (a results directory, or a folder of them) to OUT in another format.

    With --format reference each recorded question becomes OUT/<Dataset>/<model>/<qid>.json as the paper's
    run_qa_agent.py writes it (temp file, then rename): its scripts/print_qa_benchmark_md_table.py reports
    it and its runner counts those questions as done. Failed episodes are not written (the reference writes
    none for them) and are listed.

    \b
    Examples:
      sws export sws-out/eval output_full_test
      sws export --format reference results/ output_sample_random_300
    """
    from sws.eval.reference_export import export_reference
    from sws.eval.report import find_runs
    from sws.eval.results import DamagedPartError
    from sws.eval.run_meta import DamagedRunError

    runs = find_runs([run])
    if not runs:
        raise click.ClickException(f"no results (run.json) under {run}")
    try:
        summary = export_reference(runs, out)
    except DamagedPartError as exc:
        raise click.ClickException(f"{exc}; `sws report --repair` moves it aside") from exc
    except DamagedRunError as exc:
        raise click.ClickException(str(exc)) from exc
    for line in summary.lines():
        click.echo(line)
