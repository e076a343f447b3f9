"""What ``sws serve`` and ``sws ui`` leave open: every listening socket of their process trees on loopback
(none on 0.0.0.0 / ::), and nothing running or listening once they are stopped by a signal to their process
group (as a service manager or Ctrl-C sends it) or killed outright (then the next start ends the rest)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from serve.launch import free_port
from serve.processes import reap_stale
from serve.status import serve_status
from tests import processes
from tests.serve.conftest import REPO
from tests.serve.process_tree import WILDCARDS, assert_stopped, listeners, process_tree, running, snapshot
from tests.startup import RegisteredServe as ServeProcess

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture
def shell_env(monkeypatch):
    """The environment of a shell: without the loopback setting the session's own local Ray exported."""
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)


def test_serve_listens_on_loopback_only_and_a_group_signal_stops_everything(serve_index, tmp_path, shell_env):
    """SIGTERM, as a service manager sends it (Ctrl-C's SIGINT: ``test_llm_served.py``'s last test)."""
    server = ServeProcess(serve_index, args=["--num-cpus", "2"], log_path=tmp_path / "serve.log").start()
    tree, found = snapshot(server.process.pid, server.port)
    try:
        assert {"haproxy", "raylet", "gcs_server"} <= {name for name, _, _, _ in found}
        assert [(name, ip, port) for name, ip, port, _ in found if ip in WILDCARDS] == []
        assert {ip.removeprefix("::ffff:") for _, ip, _, _ in found} == {"127.0.0.1"}
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(60)
    finally:
        server.stop()
    assert_stopped(tree, {port for _, _, port, _ in found})


def test_serve_killed_outright_leaves_nothing_after_the_next_start(serve_index, tmp_path, shell_env):
    server = ServeProcess(serve_index, args=["--num-cpus", "2"], log_path=tmp_path / "serve.log").start()
    try:
        tree, found = snapshot(server.process.pid, server.port)
        # a fresh driver from a shell joins the loopback-only Ray at its loopback address
        assert serve_status(server.ready["ray_address"], timeout_s=90)["sws"]["status"] == "RUNNING"
        haproxy = [process for _, _, port, process in found if port == server.port]
        server.process.kill()
        server.process.wait(10)
    finally:
        server.stop()  # only if it still runs
    assert running(haproxy) == []  # it dies with the Ray worker that started it
    reap_stale()  # what the next start does first
    assert_stopped(tree, {port for _, _, port, _ in found})


def test_serve_under_a_long_tmpdir_and_its_run_directory_goes_with_it(serve_index, tmp_path, shell_env):
    """A batch scheduler's ``$TMPDIR`` (``/tmp/h4t/slurm-12345``) would put HAProxy's socket paths over its 97
    characters; its private directory (sockets, config) is a short one instead, removed when it stops."""
    base = tempfile.mkdtemp(prefix="h4t-", dir="/tmp")
    tmpdir = os.path.join(base, "slurm-12345")
    os.mkdir(tmpdir)
    env = {"TMPDIR": tmpdir}
    try:
        server = ServeProcess(serve_index, args=["--num-cpus", "2"], env=env, log_path=tmp_path / "serve.log")
        try:
            server.start()
            assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200
            ledger = Path(tmpdir) / f"sws-serve-{os.getuid()}" / f"{server.ready['pid']}.json"
            run_dir = Path(json.loads(ledger.read_text())["run_dir"])
            assert run_dir.is_dir() and stat.S_IMODE(run_dir.stat().st_mode) == 0o700
        finally:
            server.stop()
        assert not run_dir.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_ui_listens_on_loopback_only_and_a_group_signal_stops_it(serve_index, tmp_path):
    port = free_port()
    command = [sys.executable, "-m", "sws", "ui", "--index", str(serve_index), "--port", str(port)]
    ui = processes.popen(command, cwd=REPO, stderr=subprocess.DEVNULL)
    tree = []
    try:
        deadline = time.monotonic() + 120  # a hang guard: it answers in seconds
        while True:  # up once /healthz answers (``/`` is a 302: waiting for a 200 there ran out the deadline)
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert ui.poll() is None and time.monotonic() < deadline, f"sws ui not up (exit {ui.poll()})"
            time.sleep(0.5)
        tree = process_tree(ui.pid)
        assert [(ip, p) for _, ip, p, _ in listeners(tree)] == [("127.0.0.1", port)]
        os.killpg(ui.pid, signal.SIGTERM)
        ui.wait(30)
    finally:
        if ui.poll() is None:
            ui.kill()
    assert_stopped(tree, {port})
