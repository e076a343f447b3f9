"""Failures of the machine or the network are one line ``Error: …`` (exit 1), never a traceback: a full disk
under ``sws build corpus`` and ``sws eval`` (a real tmpfs of a few KB, mounted in a private mount namespace
that the command's Ray workers share), and a ``--tools-url`` where nothing listens."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from serve.launch import free_port
from sws.cli import cli

BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"
# mount a tmpfs of size $1 on $2, then run the rest (as root of a user namespace: no privileges needed)
ON_SMALL_DISK = 'mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@"'


def _on_full_disk(tmp_path, size: str, *args: str, command: tuple[str, ...] = ("-m", "sws")) -> list[str]:
    """``python COMMAND ARGS`` (``DISK`` in them is a tmpfs of ``size``) in its own Ray; stderr's lines, exit 1
    checked."""
    disk = tmp_path / "disk"
    disk.mkdir()
    args = [a.replace("DISK", str(disk)) for a in args]
    shell = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", ON_SMALL_DISK, "sh"]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_ADDRESS": ""}  # a Ray of its own, in the namespace
    done = subprocess.run(
        [*shell, size, str(disk), sys.executable, *command, *args, "ray.num_cpus=1"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,  # a hang guard only
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr.splitlines()


def _error(lines: list[str]) -> str:
    (error,) = [line for line in lines if line.startswith("Error:")]
    return error


@pytest.mark.parametrize(
    "command", [("-m", "sws", "build", "corpus"), ("ray_jobs/build_corpus.py",)], ids=["cli", "ray_job"]
)
def test_corpus_build_on_a_full_disk(tmp_path, command):
    lines = _on_full_disk(tmp_path, "200k", "--out", "DISK/corpus", command=command)
    assert "No space left on device" in _error(lines)
    assert lines[-1] == _error(lines)


def test_eval_on_a_full_disk(tmp_path, leads_root):
    args = ["eval", "--dataset", "bamboogle", "--data", BAMBOOGLE, "--limit", "4"]
    lines = _on_full_disk(
        tmp_path, "8k", *args, "--index", str(leads_root / "index"), "--out", "DISK/run", "eval.workers=1"
    )
    assert "No space left on device" in _error(lines)
    assert lines[-1] == _error(lines)


@pytest.mark.usefixtures("ray_local")
def test_tools_url_where_nothing_listens(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    args = ["eval", "--dataset", "bamboogle", "--data", BAMBOOGLE, "--limit", "2", "--tools-url", url]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    error = result.output.strip().splitlines()[-1]
    assert error.startswith("Error: ") and url in error
