"""A command of the CLI run as a ``ray_jobs/`` entrypoint: the same flags, checks and messages, with what a job
does differently (no progress bars in its log; stopped by ``ray job stop``, it says to submit it again)."""

from __future__ import annotations

import sys

import click

from sws.stopping import stop_on_signals

JOB_DONE = "what was finished is kept; submit the same job again to resume"
_JOB = object()  # the click context's object of a command run by run_job


def run_job(command: click.Command) -> None:
    """Run ``command`` on this process's arguments as the CLI does (a bad flag: the usage error and exit 2; a
    stage's error: ``Error: …`` and exit 1), a system error (a full disk, in the driver or a Ray worker)
    included; a stop signal ends it with ``interrupted by SIGTERM: {JOB_DONE}`` and 128 + the signal."""
    from sws.raykit import os_error_in

    try:
        with stop_on_signals(lambda: JOB_DONE):
            command.main(obj=_JOB, help_option_names=["-h", "--help"])
    except Exception as exc:
        error = os_error_in(exc)
        if error is None:
            raise
        sys.exit(f"Error: {error or repr(error)}")


def in_job() -> bool:
    """The current command runs as a Ray job (:func:`run_job`)."""
    return click.get_current_context().obj is _JOB
