"""Option decorators shared by the subcommands, so flags read the same everywhere; the commands' own flags
are declared in ``sws.config.flags`` (with the ``ray_jobs/`` parsers) and turned into options here."""

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import click

from sws.config import SwsConfig, load_config
from sws.config.flags import VERIFY_HELP, Flag, flag_settings

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
verify_option = click.option("--verify", is_flag=True, help=VERIFY_HELP)


def dataset_names(fetchable: bool = False) -> str:
    """The registered datasets' names, ``"a, b or c"`` (``fetchable``: those with a fetch source)."""
    from sws.eval.registry import dataset_choices

    return dataset_choices(fetchable)


REGISTRIES: dict[str, Callable[[], str]] = {"datasets": dataset_names}  # by Flag.names


class NamesOption(click.Option):
    """An option whose help lists a registry's names (``{names}`` in ``help``), made when the help is shown:
    datasets registered after the CLI was imported are listed too."""

    def __init__(self, *args, names: Callable[[], str], **kwargs):
        super().__init__(*args, **kwargs)
        self.template, self.names = self.help, names

    def get_help_record(self, ctx: click.Context):
        self.help = self.template.replace("{names}", self.names())
        return super().get_help_record(ctx)


def flag_options(flags: Sequence[Flag]):
    """A decorator adding ``flags`` as the command's options, in their order (values by ``Flag.param``)."""

    def decorate(command):
        for flag in reversed(flags):
            kind = {"is_flag": True} if flag.switch else {"type": flag.type, "multiple": flag.multiple}
            if flag.names:
                kind |= {"cls": NamesOption, "names": REGISTRIES[flag.names]}
            command = click.option(
                flag.name,
                flag.param,
                **kind,
                required=flag.required,
                envvar=flag.envvar,
                metavar=flag.metavar,
                hidden=flag.hidden,
                help=flag.help,
            )(command)
        return command

    return decorate


def resolve_config(
    profile: str, overrides: tuple[str, ...], settings: dict[str, Any] | None = None
) -> SwsConfig:
    """Load the config (``settings``: what flags set, as ``load_config`` takes them), turning a bad profile,
    override or value into a one-line usage error."""
    try:
        return load_config(profile, overrides, settings)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def resolve_flags(
    flags: Sequence[Flag], profile: str, overrides: tuple[str, ...], values: dict[str, Any]
) -> tuple[SwsConfig, dict[str, Any]]:
    """The config with the keys ``flags`` set from their parsed ``values``, and the stage's arguments (the
    flags that are no config key)."""
    keys, stage = flag_settings(flags, values)
    return resolve_config(profile, overrides, keys), stage


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
