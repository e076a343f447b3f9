"""One ``sws eval`` per results directory: an OS file lock on ``OUT/.lock``, held for the run's life.

``flock`` is released by the kernel when its process exits, however it ends (a crash or ``kill -9``
included), so a stale lock never blocks a later run. The holder writes its PID into the file, for the
refusal's message. The lock is advisory and per host: a directory on shared storage is locked against runs
on the same node only (``flock`` over NFS depends on the server).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = ".lock"


class RunLockedError(RuntimeError):
    """Another process holds the results directory; ``pid`` is its PID (None if it did not say)."""

    def __init__(self, out_dir: Path, pid: int | None):
        self.pid = pid
        holder = f"PID {pid}" if pid else "a process that gave no PID"
        super().__init__(
            f"{out_dir} is in use by another sws eval ({holder}); wait for it to end or use another --out "
            "directory"
        )


@contextlib.contextmanager
def run_lock(out_dir: str | Path) -> Iterator[None]:
    """Hold the lock of ``out_dir`` (created if missing) while the block runs.

    Raises:
        RunLockedError: another process holds it.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            raise RunLockedError(out, int(text) if text.isdigit() else None) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
