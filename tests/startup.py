"""Start deadlines of the heaviest fixtures, from measured start times with headroom.

A start waits ``HEADROOM`` times the longer of its start time measured on the idle 2-core development
machine (``MEASURED_S``) and its last start on this machine (recorded in pytest's cache), times the load
beyond the machine's cores at collection (:func:`load_factor`); the tests that use such a
fixture get that much more pytest-timeout (:func:`extend_timeouts`), so a slow start fails with a message
saying what was slow (the step its log was at) rather than being cut off by pytest-timeout's stack dump.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pytest
import pytest_timeout

from serve.launch import ServeProcess
from tests.processes import REGISTRY

HEADROOM = 4.0
MEASURED_S = {"sws serve --llm": 90.0, "sws serve": 30.0}  # ready line after start; serve/README.md
FIXTURES = {
    "llm_server": "sws serve --llm",
    "server": "sws serve",
    "proxy_server": "sws serve",
    "leads_server": "sws serve",
}
_cache: list = []  # pytest's cache, once configured


def configure(config: pytest.Config) -> None:
    _cache[:] = [config.cache] if getattr(config, "cache", None) else []


def _key(kind: str) -> str:
    return f"sws/start_s/{kind.replace(' ', '_')}"


def recorded_s(kind: str) -> float | None:
    """The last start of ``kind`` on this machine, if one was recorded."""
    return _cache[0].get(_key(kind), None) if _cache else None


@functools.cache  # taken once, so a fixture's wait and its tests' timeouts agree
def load_factor() -> float:
    """How many times over its cores the machine is busy (1 when idle: the measured starts were)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def budget_s(kind: str) -> float:
    return HEADROOM * max(MEASURED_S[kind], recorded_s(kind) or 0.0) * load_factor()


def extend_timeouts(items: list[pytest.Item]) -> None:
    """Add the start budgets of the :data:`FIXTURES` a test uses to its pytest-timeout."""
    for item in items:
        extra = sum(budget_s(FIXTURES[name]) for name in set(item.fixturenames) & FIXTURES.keys())
        marker = item.get_closest_marker("timeout")
        base = (
            marker.args[0] if marker and marker.args else pytest_timeout.get_env_settings(item.config).timeout
        )
        if extra and base:
            item.add_marker(pytest.mark.timeout(base + extra))


class RegisteredServe(ServeProcess):
    """:class:`ServeProcess` whose child is registered the moment it starts (``tests/processes.py``), which
    waits :func:`budget_s` of ``kind`` for it and fails naming the step it was at when that runs out."""

    def __init__(self, index, *, kind: str = "sws serve", **options):
        super().__init__(index, startup_timeout_s=budget_s(kind), **options)
        self.kind = kind

    @property
    def process(self):
        return self.__dict__.get("_process")

    @process.setter
    def process(self, process) -> None:
        self.__dict__["_process"] = process
        if process is not None:
            REGISTRY.register(process.pid, f"{self.kind} --index {self.index} {' '.join(self.args)}")

    def start(self) -> RegisteredServe:
        began = time.monotonic()
        try:
            super().start()
        except RuntimeError:
            if time.monotonic() - began < self.startup_timeout_s:
                raise
            pytest.fail(self._slow(), pytrace=False)
        if _cache:
            _cache[0].set(_key(self.kind), round(time.monotonic() - began, 1))
        return self

    def _slow(self) -> str:
        last = recorded_s(self.kind)
        measured = f"{MEASURED_S[self.kind]:.0f} s on 2 idle cores, {last or 'none'} s at the last start here"
        try:
            text = Path(self.log_path).read_text(errors="replace")
            lines = [line for line in text.splitlines() if line.strip()]
            step = f"its log's last line: {lines[-1][:200]!r}" if lines else "its log is empty"
        except (OSError, TypeError):
            step = "no log"
        return (
            f"{self.kind} was not ready within {self.startup_timeout_s:.0f} s ({HEADROOM:.0f} × the longer"
            f" of its start times, {measured}, × load {load_factor():.1f}); slow at {step};"
            f" log: {self.log_path}"
        )
