"""The private directory of a local ``sws serve``'s HAProxy ingress: its config, state and control sockets.

HAProxy refuses a UNIX socket path over ``SOCKET_PATH_MAX`` characters, and Ray puts each socket in a
folder named by the node's ID (``DIR/<node id>/admin.sock``), so ``DIR`` must be short: under ``$TMPDIR``
when that leaves room (cluster schedulers set long ones, e.g. ``/tmp/h4t/slurm-12345``), else under
``/tmp``. The directory is created 0700 (``mkdtemp``) and removed when the service stops (or, after a
``kill -9``, when the next one reaps what it left: ``serve/processes.py``). When ``$TMPDIR`` is too long for
Ray's own socket paths as well, Ray's temp dir goes there too (``RAY_TMPDIR``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

SOCKET_PATH_MAX = 97  # HAProxy's limit ("socket path ... too long (max 97)")
RAY_SOCKET_PATH_MAX = 107  # AF_UNIX's, which Ray checks for its own sockets
SOCKETS = ("admin.sock", "metrics.sock")  # RAY_SERVE_HAPROXY_SOCKET_PATH, _METRICS_SOCKET_PATH
NODE_ID_CHARS = 56  # the hex node ID Ray puts between the directory and each socket
# Ray's longest socket path under its temp dir (a 7-digit PID in the session's name)
RAY_SOCKET = "ray/session_2026-12-07_14-55-00_123456_1234567/sockets/plasma_store"
PREFIX = "sws-"
PARENTS = ("/tmp",)  # where to go when $TMPDIR is too long


def longest_socket_path(run_dir: str | Path) -> int:
    """The length of the longest HAProxy socket path Ray makes under ``run_dir``."""
    return max(len(os.path.join(run_dir, "0" * NODE_ID_CHARS, name)) for name in SOCKETS)


def ray_fits(temp_dir: str | Path) -> bool:
    """Whether Ray's socket paths fit under ``temp_dir`` as its ``RAY_TMPDIR``."""
    return len(os.path.join(temp_dir, RAY_SOCKET)) <= RAY_SOCKET_PATH_MAX


def make_run_dir() -> Path:
    """A new 0700 directory whose HAProxy socket paths fit: under ``$TMPDIR``, else ``/tmp``.

    Raises:
        ValueError: one line naming the cause, when no such directory can be made.
    """
    tried = []
    for parent in dict.fromkeys((tempfile.gettempdir(), *PARENTS)):
        if longest_socket_path(os.path.join(parent, PREFIX + "x" * 8)) > SOCKET_PATH_MAX:  # mkdtemp: 8 random
            tried.append(f"{parent} is too long")
            continue
        try:
            return Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        except OSError as exc:
            tried.append(f"{parent}: {exc.strerror}")
    raise ValueError(
        f"no directory for HAProxy's control sockets, whose paths may not exceed {SOCKET_PATH_MAX} characters "
        f"({'; '.join(tried)}): set TMPDIR to a short writable directory"
    )


def check_run_dir(run_dir: str | Path) -> None:
    """Refuse a ``run_dir`` whose HAProxy socket paths would be too long.

    Raises:
        ValueError: one line naming the cause.
    """
    if (length := longest_socket_path(run_dir)) > SOCKET_PATH_MAX:
        raise ValueError(
            f"HAProxy's control socket paths under {run_dir} would be {length} characters, over its "
            f"{SOCKET_PATH_MAX}: use a shorter directory (or set TMPDIR to one)"
        )


def remove_run_dir(run_dir: str | Path) -> None:
    """Remove a directory ``make_run_dir`` made (one of another name or owner is left alone)."""
    path = Path(run_dir)
    try:
        ours = path.name.startswith(PREFIX) and path.lstat().st_uid == os.getuid() and path.is_dir()
    except OSError:
        return
    if ours:
        shutil.rmtree(path, ignore_errors=True)
