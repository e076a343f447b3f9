"""What the HAProxy ingress of a server under test saw of its backend servers: its ``show stat`` table, read
through the admin socket named in the running HAProxy's config (``stats socket``)."""

from __future__ import annotations

import csv
import io
import socket
from pathlib import Path

from tests.serve.process_tree import process_tree


def _admin_socket(pid: int) -> str:
    """The admin socket of the HAProxy in ``pid``'s process tree (the one Ray started last)."""
    haproxies = [p for p in process_tree(pid) if p.name() == "haproxy"]
    assert haproxies, f"no HAProxy under pid {pid}"
    command = max(haproxies, key=lambda p: p.create_time()).cmdline()
    config = Path(command[command.index("-f") + 1]).read_text()
    return next(line.split()[2] for line in config.splitlines() if line.strip().startswith("stats socket "))


def server_stats(pid: int, app: str) -> list[dict[str, str]]:
    """One row per server of Serve app ``app``'s HTTP backend (``svname``, ``status``, ``stot`` requests,
    ``chkdown`` times marked down, ``bck`` 1 for a backup server, ...), as HAProxy counts them since it started;
    other apps deployed on the same Serve (``test_served.py``'s ``tight``) have backends of their own."""
    with socket.socket(socket.AF_UNIX) as admin:
        admin.connect(_admin_socket(pid))
        admin.sendall(b"show stat\n")
        table = b"".join(iter(lambda: admin.recv(65536), b"")).decode()
    rows = csv.DictReader(io.StringIO(table.removeprefix("# ")))
    return [
        row for row in rows if row["pxname"] == f"http-{app}" and row["svname"] not in ("FRONTEND", "BACKEND")
    ]
