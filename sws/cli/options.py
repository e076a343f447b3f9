"""Option decorators shared by the subcommands, so flags read the same everywhere."""

import contextlib
from collections.abc import Iterator

import click

from sws.config import SwsConfig, load_config

config_option = click.option(
    "--config",
    "-c",
    "profile",
    default="local",
    show_default=True,
    envvar="SWS_CONFIG",
    help="Config profile name (local, paper, smollm2) or a YAML path.",
)
overrides_argument = click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")
# Path types for --out directories and input files: an existing path of the other kind is a one-line usage
# error ("Directory 'x' is a file.", "File 'x' is a directory.") before anything runs.
OUT_DIR = click.Path(file_okay=False)
INPUT_FILE = click.Path(dir_okay=False)
verify_option = click.option(
    "--verify",
    is_flag=True,
    help="Check every index file's checksum before opening it (reads the whole index once; sizes are always checked).",
)


def resolve_config(profile: str, overrides: tuple[str, ...]) -> SwsConfig:
    """Load the config, turning a bad profile or override into a one-line usage error."""
    try:
        return load_config(profile, overrides)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    """A stage's error as the CLI's one-line error (a usage error when the arguments are wrong); so is a
    system error (a full disk, a missing permission), in the driver or a Ray worker."""
    from sws.raykit import os_error_in
    from sws.stages import StageError

    try:
        yield
    except StageError as exc:
        raise (click.UsageError if exc.usage else click.ClickException)(str(exc)) from exc
    except Exception as exc:
        error = os_error_in(exc)
        if error is None:
            raise
        raise click.ClickException(str(error) or repr(error)) from exc
