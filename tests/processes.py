"""Every process the tests start, ended however a test ends (``tests/process_plugin.py`` wires it to pytest).

A run marks what it starts: ``SWS_TEST_RUN=<run id>`` is set in the environment at configure time (after
the ids of the runs it runs in, if any), so every child inherits it (xdist workers, ``sws serve``, a local
Ray, their children), and :func:`marked` tells the run's processes from the developer's own and other
sessions' by reading it back (``psutil``'s ``environ()``).

A test or fixture that starts a process registers it (:func:`popen`, :func:`run`, :meth:`Registry.adopting`,
``tests/startup.py``'s ``sws serve``) under its owner, the fixture being set up or the test running; the
registry ends the owner's groups when that fixture is finalized (also after a timeout in its setup) or that
test torn down, all of them at the end of the run and on SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

from serve.processes import end_processes

RUN_ENV = "SWS_TEST_RUN"
GRACE_S = 10.0  # from SIGTERM to SIGKILL: ``sws serve`` stops its Ray and HAProxy in ~6 s
SESSION = "session"  # the owner of what is started outside any fixture or test


@dataclass(frozen=True)
class Group:
    """A started process (usually a process group leader) by PID and start time, so a reused PID is never
    touched; ``what`` names it in messages."""

    pid: int
    created: float
    what: str
    leads_group: bool  # never true of the test process's own group

    def members(self) -> list[psutil.Process]:
        """The leader and its descendants while it runs; if it leads a process group, the group's processes
        (a process group ID is not reused while the group has members; once it is empty, a new process of that
        PID may lead another group, which is then left alone: two xdist workers died of their session's Ray's
        raylet ended so)."""
        found, reused = set(), False
        with contextlib.suppress(psutil.Error):
            leader = psutil.Process(self.pid)
            reused = leader.create_time() != self.created
            if not reused:
                found = {leader, *leader.children(recursive=True)}
        if self.leads_group and not reused:  # once its group is empty, its ID may lead another one
            for process in psutil.process_iter():
                with contextlib.suppress(psutil.Error, OSError):
                    if os.getpgid(process.pid) == self.pid:
                        found.add(process)
        return [p for p in found if p.pid != os.getpid()]


class Registry:
    """The process groups this test process started, each under the owner that was current then."""

    def __init__(self) -> None:
        self.groups: dict[Group, object] = {}
        self._owners: list[object] = []

    @contextlib.contextmanager
    def owner(self, owner: object) -> Iterator[None]:
        """What is registered inside belongs to ``owner`` (a fixture definition or a test item)."""
        self._owners.append(owner)
        try:
            yield
        finally:
            self._owners.pop()

    def current(self) -> object:
        """The owner of what is registered now."""
        return self._owners[-1] if self._owners else SESSION

    def register(self, pid: int, what: str, owner: object = None) -> Group:
        """Register a started process under ``owner`` (default: :meth:`current`)."""
        group = Group(pid, psutil.Process(pid).create_time(), what, os.getpgid(pid) == pid)
        self.groups[group] = owner or self.current()
        return group

    @contextlib.contextmanager
    def adopting(self, what: str) -> Iterator[None]:
        """Register the children this process starts inside (e.g. ``ray.init``'s GCS and raylet), also when
        the block fails or is interrupted."""
        before = {p.pid for p in psutil.Process().children()}
        try:
            yield
        finally:
            for child in psutil.Process().children():
                if child.pid not in before:
                    with contextlib.suppress(psutil.Error):
                        self.register(child.pid, f"{what}: {child.name()}")

    def end(self, owner: object = None, grace_s: float = GRACE_S) -> None:
        """End the groups of ``owner`` (None: all): SIGTERM to each member, SIGKILL after ``grace_s``."""
        self.end_groups([g for g, o in self.groups.items() if owner is None or o is owner], grace_s)

    def end_groups(self, groups: list[Group], grace_s: float = GRACE_S) -> None:
        end_processes([p for g in groups for p in g.members()], grace_s)
        for group in groups:
            self.groups.pop(group, None)


REGISTRY = Registry()


def popen(command: list[str], **options) -> subprocess.Popen:
    """``subprocess.Popen`` in a process group of its own, registered."""
    process = subprocess.Popen(command, start_new_session=True, **options)
    REGISTRY.register(process.pid, " ".join(map(str, command[:4])))
    return process


def run(command: list[str], timeout: float, **options) -> subprocess.CompletedProcess:
    """``subprocess.run(..., capture_output=True, text=True)`` in a registered group, which ends at once when
    the wait is cut short (``timeout``, a test timeout, an interrupt), not only the command itself."""
    process = popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        REGISTRY.end_groups([g for g in REGISTRY.groups if g.pid == process.pid])
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def mark_run() -> str:
    """Mark this run: a new id after those of the runs it runs in (a test's own pytest run is theirs too)."""
    run_id = uuid.uuid4().hex
    os.environ[RUN_ENV] = ":".join(filter(None, [os.environ.get(RUN_ENV), run_id]))
    return run_id


def marked(run_id: str | None = None) -> list[psutil.Process]:
    """The running processes (zombies aside) that carry the marker of ``run_id`` (default: this process's
    run), this one aside."""
    run_id = run_id or os.environ[RUN_ENV].split(":")[-1]
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            mine = process.pid != os.getpid() and process.status() != psutil.STATUS_ZOMBIE
            if mine and run_id in process.environ().get(RUN_ENV, "").split(":"):
                found.append(process)
    return found


def describe(process: psutil.Process) -> str:
    """``PID name: command line`` (cut to 160 characters)."""
    try:
        return f"{process.pid} {process.name()}: {' '.join(process.cmdline())[:160]}"
    except psutil.Error:
        return f"{process.pid} (gone)"
