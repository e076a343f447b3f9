"""``sws ui``: the search playground and trajectory viewer in the browser."""

from __future__ import annotations

import ipaddress

import click


@click.command("ui")
@click.option(
    "--index",
    "index_dir",
    envvar="SWS_INDEX",
    type=click.Path(exists=True, file_okay=False),
    help="Index directory for the search playground (env SWS_INDEX; optional).",
)
@click.option(
    "--runs",
    "run_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="A results directory (holding run.json), a folder of them, or a reference output tree; repeatable.",
)
@click.option("--port", type=int, default=8765, show_default=True, help="Port (0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (no authentication!).")
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    help="A Host name to answer besides localhost and --host (DNS-rebinding guard; '*': any); repeat for more.",
)
@click.option(
    "--allow-origin",
    "allowed_origins",
    multiple=True,
    help="A browser Origin (scheme://host[:port]) to answer besides same-origin and localhost ones; repeatable.",
)
def ui_command(index_dir, run_dirs, port, host, allowed_hosts, allowed_origins) -> None:
    """Serve the search playground, runs table, episode pages and tool-use charts (offline, no CDN).

    \b
    Examples:
      sws ui --index sws-out/index
      sws ui --index sws-out/index --runs results/ --runs other-run/ --port 8080
    """
    import uvicorn

    from sws.host_guard import HostPolicy
    from sws.index import SwsIndexError
    from sws.ui import create_app

    if not index_dir and not run_dirs:
        raise click.UsageError("give --index, --runs or both")
    if not _is_loopback(host):
        click.echo(f"warning: binding {host}: the UI has no authentication", err=True)
    try:
        hosts = HostPolicy(host, allowed_hosts, allowed_origins, "--allow-host", "--allow-origin")
        app = create_app(index_dir, run_dirs, hosts=hosts)
    except SwsIndexError as exc:
        raise click.ClickException(str(exc)) from exc
    runs = len(app.state.runs.runs)
    click.echo(
        f"sws ui: http://{host}:{port}/  ({'index ' + index_dir if index_dir else 'no index'}, {runs} runs)"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
