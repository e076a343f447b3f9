"""The process tree of a server under test and its listening sockets (``psutil``): what ``sws serve`` and
``sws ui`` leave open, and whether everything they started has ended."""

from __future__ import annotations

import contextlib
import time

import psutil

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
