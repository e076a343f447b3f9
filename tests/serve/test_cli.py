"""``sws serve`` through click's runner (its full run is the ``server`` fixture of the other tests)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from click.testing import CliRunner

from sws.cli.serve import serve


def test_help_shows_usage():
    result = CliRunner().invoke(serve, ["--help"])
    assert result.exit_code == 0
    for flag in (
        "--index",
        "--port",
        "--host",
        "--replicas",
        "--ingress",
        "--no-batching",
        "SWS_SERVE_TOKEN",
    ):
        assert flag in result.output


def test_bad_arguments_are_one_line_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(serve, ["--index", str(tmp_path)])
    assert result.exit_code == 1 and "no manifest.json" in result.output
    result = runner.invoke(serve, ["--index", str(tmp_path), "serve.no_such_knob=1"])
    assert (
        result.exit_code == 2
        and "invalid config" in result.output
        and "(serve.no_such_knob)" in result.output
    )
    assert result.output.strip().splitlines()[-1].startswith("Error: invalid config")  # one line
    result = runner.invoke(serve, ["--index", str(tmp_path), "--ingress", "nginx"])
    assert result.exit_code == 2
    result = runner.invoke(serve, ["--index", str(tmp_path), "serve.ingress=nginx"])
    assert result.exit_code == 2 and "ingress" in result.output  # checked when the config is read


def test_a_busy_port_is_one_line(index_copy):
    """A second ``sws serve`` on a port something listens on: one line before anything starts, not a page of
    HAProxy's log (in a child process: this one may hold the session's Ray, whose Serve the CLI would join)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        command = [sys.executable, "-m", "sws", "serve", "--index", str(index_copy), "--port", str(port)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use (another `sws serve` or another "
        + "server is using it); stop it or pass another --port"
    ]
