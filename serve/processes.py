"""The processes a local ``sws serve`` starts (its Ray, Serve's actors, HAProxy), owned by PID.

Ray's workers and agents run in their own process groups, and a worker killed mid-stop leaves its HAProxy
behind, so neither a group signal nor Ray's own shutdown is enough. The launcher records its process tree
in ``STATE_DIR/<pid>.json`` (each process by PID and start time, so a reused PID is never touched), ends
what is left of it when it stops, and on the next start ends the processes of a run that was killed before
it could (``reap_stale``).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import psutil

from serve.run_dir import remove_run_dir

STATE_DIR = Path(tempfile.gettempdir()) / f"sws-serve-{os.getuid()}"


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _alive(entries: dict[int, float]) -> list[psutil.Process]:
    """The processes of ``{pid: start time}`` still running (a zombie or a reused PID is not)."""
    alive = []
    for pid, started in entries.items():
        try:
            process = psutil.Process(pid)
            if process.create_time() == started and _running(process):
                alive.append(process)
        except psutil.Error:
            pass
    return alive


def end_processes(processes: list[psutil.Process], grace_s: float = 1.0) -> None:
    """SIGTERM, then SIGKILL what is still running after ``grace_s``."""
    for signal_them in (psutil.Process.terminate, psutil.Process.kill):
        for process in processes:
            try:
                signal_them(process)
            except psutil.Error:
                pass
        deadline = time.monotonic() + grace_s
        while (processes := [p for p in processes if _running(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not processes:
            return


class ProcessLedger:
    """This process's descendants, recorded in ``state_dir/<pid>.json`` as they appear.

    Args:
        state_dir: where the ledger file goes (default ``STATE_DIR``).
        run_dir: the run's private directory (``serve/run_dir.py``), removed with the ledger.
    """

    def __init__(self, state_dir: str | Path | None = None, run_dir: str | Path | None = None):
        self.me = psutil.Process()
        self.run_dir = str(run_dir) if run_dir else None
        self.path = Path(state_dir or STATE_DIR) / f"{self.me.pid}.json"
        self.known: dict[int, float] = {}
        self.head: dict[int, float] | None = None  # this process's children at the first record

    def record(self) -> None:
        """Add the descendants running now (to memory and to the file). Call it first right after
        ``ray.init``: the children then are the local Ray's head processes (GCS, raylet, dashboard, ...)."""
        before = len(self.known)
        for process in self.me.children(recursive=True):
            try:
                self.known.setdefault(process.pid, process.create_time())
            except psutil.Error:
                pass
        if self.head is None:
            self.head = {c.pid: self.known[c.pid] for c in self.me.children() if c.pid in self.known}
        if len(self.known) == before and self.path.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        owner = {"pid": self.me.pid, "create_time": self.me.create_time()}
        temporary = self.path.with_suffix(".tmp")
        record = {"owner": owner, "processes": sorted(self.known.items()), "run_dir": self.run_dir}
        temporary.write_text(json.dumps(record))
        temporary.replace(self.path)

    def head_intact(self, settle_s: float = 1.0) -> bool:
        """Whether the local Ray's head processes all still run ``settle_s`` from now. A signal to the whole
        process group (a service manager's stop, Ctrl-C in a terminal) reaches them too, and a Ray missing
        one cannot shut Serve down in time (it waits out its timeouts)."""
        head = self.head or {}
        deadline = time.monotonic() + settle_s
        while True:
            if len(_alive(head)) < len(head):
                return False
            if time.monotonic() >= deadline:
                return True
            time.sleep(0.1)

    def end_all(self, grace_s: float = 1.0) -> None:
        """End every recorded or current descendant still running; remove the run directory and the ledger file."""
        self.record()
        end_processes(_alive(self.known), grace_s)
        if self.run_dir:
            remove_run_dir(self.run_dir)
        self.path.unlink(missing_ok=True)


def reap_stale(state_dir: str | Path | None = None, grace_s: float = 1.0) -> list[int]:
    """End the processes recorded by runs whose launcher is gone (and remove their run directories); returns
    their PIDs."""
    ended: list[int] = []
    for path in Path(state_dir or STATE_DIR).glob("*.json"):
        try:
            ledger = json.loads(path.read_text())
            owner = ledger["owner"]
            if _alive({owner["pid"]: owner["create_time"]}):
                continue
            processes = _alive({pid: started for pid, started in ledger["processes"]})
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours: leave it
        end_processes(processes, grace_s)
        ended += [process.pid for process in processes]
        if ledger.get("run_dir"):
            remove_run_dir(ledger["run_dir"])
        path.unlink(missing_ok=True)
    return ended
