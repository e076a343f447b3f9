"""The local ``sws serve``'s private directory (``serve/run_dir.py``): HAProxy's (and, if need be, Ray's) socket
paths fit however long ``$TMPDIR`` is, it is private, and it goes when the run stops or is reaped."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile

import pytest

from serve import run_dir as run_dirs
from serve.launch import prepare_local_env
from serve.processes import reap_stale
from serve.run_dir import NODE_ID_CHARS, RAY_SOCKET_PATH_MAX, SOCKET_PATH_MAX, make_run_dir
from sws.config import ServeConfig
from tests import processes

NODE_ID = "f" * NODE_ID_CHARS  # Ray puts each node's HAProxy sockets in DIR/<node id>/
LAUNCHER = """
import sys
from serve.processes import ProcessLedger
ledger = ProcessLedger(sys.argv[1], run_dir=sys.argv[2])
ledger.record()
ledger.end_all()
"""


@pytest.fixture
def tmpdir_of(monkeypatch):
    """Sets ``$TMPDIR`` to a new directory under /tmp whose path is ``length`` characters long (19 or more),
    as a batch scheduler does; the environment ``prepare_local_env`` changes is restored after the test."""
    monkeypatch.setattr(os, "environ", dict(os.environ))
    os.environ.pop("RAY_TMPDIR", None)
    base = tempfile.mkdtemp(prefix="h4t-", dir="/tmp")

    def set_tmpdir(length: int) -> str:
        path = os.path.join(base, "x" * (length - len(base) - 1))
        os.makedirs(path, exist_ok=True)
        monkeypatch.setenv("TMPDIR", path)
        monkeypatch.setattr(tempfile, "tempdir", None)  # read $TMPDIR again
        return path

    yield set_tmpdir
    shutil.rmtree(base)


def _socket_paths(env: dict[str, str]) -> list[str]:
    return [
        os.path.join(os.path.dirname(path), NODE_ID, os.path.basename(path))
        for path in (env["RAY_SERVE_HAPROXY_SOCKET_PATH"], env["RAY_SERVE_HAPROXY_METRICS_SOCKET_PATH"])
    ]


@pytest.mark.parametrize("length", [20, 60])  # as /tmp/h4t/slurm-12345; too long for Ray's sockets too
def test_socket_paths_fit_however_long_tmpdir_is(tmpdir_of, length):
    tmpdir = tmpdir_of(length)
    env = prepare_local_env(ServeConfig(index="unused"))
    run_dir = os.path.dirname(env["RAY_SERVE_HAPROXY_CONFIG_FILE_LOC"])
    try:
        assert all(len(path) <= SOCKET_PATH_MAX for path in _socket_paths(env)), _socket_paths(env)
        assert stat.S_IMODE(os.stat(run_dir).st_mode) == 0o700
        ray_temp = env.get("RAY_TMPDIR", tmpdir)
        assert len(os.path.join(ray_temp, run_dirs.RAY_SOCKET)) <= RAY_SOCKET_PATH_MAX
    finally:
        run_dirs.remove_run_dir(run_dir)


def test_no_short_directory_is_one_line_naming_the_cause(tmpdir_of, monkeypatch, tmp_path):
    tmpdir_of(40)
    monkeypatch.setattr(run_dirs, "PARENTS", (str(tmp_path / ("y" * 40)),))
    with pytest.raises(ValueError, match="HAProxy's control sockets") as refused:
        make_run_dir()
    assert "\n" not in str(refused.value) and "set TMPDIR to a short writable directory" in str(refused.value)


def test_the_run_directory_goes_with_the_run_or_its_reaping(tmp_path):
    stopped, killed = make_run_dir(), make_run_dir()
    # a launcher of its own: a ledger ends every descendant of its process (here the session's local Ray)
    launcher = processes.run([sys.executable, "-c", LAUNCHER, str(tmp_path), str(stopped)], timeout=60)
    assert launcher.returncode == 0, launcher.stderr
    assert not stopped.exists() and not list(tmp_path.glob("*.json"))
    gone = {"pid": os.getpid(), "create_time": 0.0}  # a launcher no longer running
    (tmp_path / "1.json").write_text(json.dumps({"owner": gone, "processes": [], "run_dir": str(killed)}))
    reap_stale(tmp_path)
    assert not killed.exists() and not (tmp_path / "1.json").exists()
    other = tmp_path / "not-ours"  # a path not made by make_run_dir is left alone
    other.mkdir()
    (tmp_path / "2.json").write_text(json.dumps({"owner": gone, "processes": [], "run_dir": str(other)}))
    reap_stale(tmp_path)
    assert other.is_dir()
