"""What ``sws serve`` and ``sws ui`` leave open: every listening socket of their process trees on loopback
(none on 0.0.0.0 / ::), and nothing running or listening once they are stopped by a signal to their process
group (as a service manager or Ctrl-C sends it) or killed outright (then the next start ends the rest)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from serve.launch import ServeProcess, free_port, serve_status
from serve.processes import reap_stale
from tests.serve.conftest import REPO

pytestmark = [pytest.mark.ray, pytest.mark.slow]
WILDCARDS = {"0.0.0.0", "::"}
# how long what was stopped may take to end before the test fails: a hang guard, not a measurement (each
# wait ends as soon as everything has ended; on a busy 2-core machine Ray's teardown can take many seconds)
ENDS_WITHIN_S = 60.0


def process_tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


Listener = tuple[str, str, int, psutil.Process]  # process name, address, port, process


def listeners(processes: list[psutil.Process]) -> list[Listener]:
    """Every listening TCP socket of ``processes``."""
    found = []
    for process in processes:
        try:
            name = process.name()
            for connection in process.net_connections(kind="inet"):
                if connection.status == psutil.CONN_LISTEN:
                    found.append((name, connection.laddr.ip, connection.laddr.port, process))
        except psutil.Error:
            pass
    return found


def snapshot(pid: int, port: int) -> tuple[list[psutil.Process], list[Listener]]:
    """The process tree of ``pid`` and its listeners, taken when the service port is among them (HAProxy
    reloads replace the process that holds it)."""
    for _ in range(20):
        tree = process_tree(pid)
        found = listeners(tree)
        if port in {p for _, _, p, _ in found}:
            break
        time.sleep(0.5)
    return tree, found


def running(processes: list[psutil.Process], within_s: float = ENDS_WITHIN_S) -> list[psutil.Process]:
    """Those of ``processes`` still running (zombies aside) once they all ended or ``within_s`` passed."""
    deadline = time.monotonic() + within_s
    while True:
        left = []
        for process in processes:
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    left.append(process)
            except psutil.Error:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.25)


def held_ports(ports: set[int], within_s: float = 0.0) -> dict[int, int | None]:
    """port -> PID of those of ``ports`` still listened on once all closed or ``within_s`` passed."""
    deadline = time.monotonic() + within_s
    while True:
        held = {
            c.laddr.port: c.pid
            for c in psutil.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN and c.laddr.port in ports
        }
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.25)


def kill_all(processes: list[psutil.Process]) -> None:
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass


def assert_stopped(tree: list[psutil.Process], ports: set[int]) -> None:
    left = running(tree)
    kill_all(left)  # by PID, so a failing test leaves nothing behind either
    assert [(p.pid, p.name()) for p in left] == []
    # a Ray worker forked after the last snapshot is not in ``tree``: it ends itself once its raylet is gone
    held = held_ports(ports, within_s=ENDS_WITHIN_S)
    for pid in filter(None, held.values()):
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert held == {}


@pytest.fixture
def shell_env(monkeypatch):
    """The environment of a shell: without the loopback setting the session's own local Ray exported."""
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_listens_on_loopback_only_and_a_group_signal_stops_everything(
    serve_index, tmp_path, shell_env, sig
):
    server = ServeProcess(serve_index, args=["--num-cpus", "2"], log_path=tmp_path / "serve.log").start()
    tree, found = snapshot(server.process.pid, server.port)
    try:
        assert {"haproxy", "raylet", "gcs_server"} <= {name for name, _, _, _ in found}
        assert [(name, ip, port) for name, ip, port, _ in found if ip in WILDCARDS] == []
        assert {ip.removeprefix("::ffff:") for _, ip, _, _ in found} == {"127.0.0.1"}
        os.killpg(server.process.pid, sig)
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


def test_ui_listens_on_loopback_only_and_a_group_signal_stops_it(serve_index, tmp_path):
    port = free_port()
    command = [sys.executable, "-m", "sws", "ui", "--index", str(serve_index), "--port", str(port)]
    ui = subprocess.Popen(command, cwd=REPO, start_new_session=True, stderr=subprocess.DEVNULL)
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
