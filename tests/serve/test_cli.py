"""``sws serve`` through click's runner (its full run is the ``server`` fixture of the other tests)."""

from __future__ import annotations

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
