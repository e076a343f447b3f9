"""The ``sws`` command.

\b
Examples:
  sws quickstart                                  # the whole chain on the bundled sample
  sws fetch dump -c paper && sws fetch datasets   # the paper's dump and QA datasets
  sws build corpus --dump enwiki.xml.bz2 --out corpus/ chunk.target_tokens=1024
  sws -h
"""

import click

from sws import __version__
from sws.cli.build import build
from sws.cli.compare import compare_command
from sws.cli.evaluate import eval_command, report_command
from sws.cli.export import export_command
from sws.cli.fetch import fetch
from sws.cli.index import build_index_command, embed_command, index_group, open_command, search_command
from sws.cli.quickstart import quickstart
from sws.cli.serve import serve
from sws.cli.ui import ui_command


@click.group(help=__doc__, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sws")
def cli() -> None:
    pass


build.add_command(embed_command)
build.add_command(build_index_command)
cli.add_command(build)
cli.add_command(fetch)
cli.add_command(index_group)
cli.add_command(search_command)
cli.add_command(open_command)
cli.add_command(eval_command)
cli.add_command(report_command)
cli.add_command(compare_command)
cli.add_command(export_command)
cli.add_command(quickstart)
cli.add_command(serve)
cli.add_command(ui_command)


def main() -> None:
    cli()
