"""Path options: a path of the wrong kind is a one-line usage error on every command, before anything runs."""

import pytest
from click.testing import CliRunner

from sws.cli import cli

ARGUMENTS = {("report",): ["run"], ("compare",): ["a", "b"]}  # what a command needs besides --out
OUT_COMMANDS = [
    ["build", "corpus"],
    ["build", "embed"],
    ["build", "index"],
    ["eval"],
    ["report"],
    ["compare"],
    ["quickstart"],
    ["fetch", "dump"],
    ["fetch", "datasets"],
]


def _error_line(result) -> str:
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    return next(line for line in result.output.splitlines() if line.startswith("Error:"))


@pytest.mark.parametrize("command", OUT_COMMANDS, ids=" ".join)
def test_out_that_is_a_file(command, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("not a directory")
    result = CliRunner().invoke(cli, [*command, "--out", str(taken), *ARGUMENTS.get(tuple(command), [])])
    assert result.exit_code == 2
    assert _error_line(result) == f"Error: Invalid value for '--out': Directory '{taken}' is a file."
    assert taken.read_text() == "not a directory"


@pytest.mark.parametrize("flag", ["--dump", "--index"])
def test_dump_or_index_that_is_a_directory(flag, tmp_path):
    result = CliRunner().invoke(cli, ["build", "corpus", flag, str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert _error_line(result) == f"Error: Invalid value for '{flag}': File '{tmp_path}' is a directory."
    assert not (tmp_path / "out").exists()
