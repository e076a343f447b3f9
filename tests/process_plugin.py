"""pytest hooks of the process registry (``tests/processes.py``), loaded by ``tests/conftest.py``.

What a fixture starts is ended when that fixture is finalized (also after its setup failed or timed out),
what a test starts when it is torn down, everything at the end of the session and on SIGTERM. The main
pytest process (xdist's controller) marks the run, ends the processes of a crashed xdist worker and,
once every worker is done, fails the run naming any marked process still running (and ends it).
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from serve.processes import end_processes
from tests.processes import GRACE_S, REGISTRY, describe, mark_run, marked

_state: dict = {}


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "process_settle_s",
        "how long the run's processes may take to end after the last teardown (Ray's after ray.shutdown, on a"
        " busy machine) before the end-of-run check names them; it ends as soon as none is left",
        default="30",
    )


def pytest_configure(config: pytest.Config) -> None:
    _state["controller"] = _is_controller(config)
    if _state["controller"]:  # xdist's workers inherit it with the rest of the environment
        mark_run()
    _state["sigterm"] = signal.signal(signal.SIGTERM, _on_sigterm)


def pytest_unconfigure(config: pytest.Config) -> None:
    if "sigterm" in _state:
        signal.signal(signal.SIGTERM, _state.pop("sigterm"))


def _on_sigterm(signum: int, frame: object) -> None:
    """End what this process started (the controller: every process of the run, the workers with it), then
    die of the signal; a second SIGTERM ends it at once."""
    signal.signal(signum, signal.SIG_DFL)
    REGISTRY.end()
    if _state.get("controller"):
        end_processes(marked(), 2 * GRACE_S)  # the workers end their own first
    os.kill(os.getpid(), signum)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    with REGISTRY.owner(fixturedef):
        return (yield)


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
    REGISTRY.end(fixturedef)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with REGISTRY.owner(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    try:
        return (yield)
    finally:
        REGISTRY.end(item)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """A crashed xdist worker: end what it and its tests started (they carry its worker id)."""
    if error:
        worker = node.gateway.id
        left = [p for p in marked() if _environ(p).get("PYTEST_XDIST_WORKER") == worker]
        if left:
            _report(node.config, f"ending the processes of crashed worker {worker}", left)
            end_processes(left, GRACE_S)


@pytest.hookimpl(trylast=True)  # after xdist has ended its workers
def pytest_sessionfinish(session: pytest.Session) -> None:
    REGISTRY.end()
    if not _is_controller(session.config):
        return
    deadline = time.monotonic() + float(session.config.getini("process_settle_s"))
    while (left := marked()) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        _report(session.config, "processes of this run still running at its end (ended now)", left)
        end_processes(left, GRACE_S)
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _environ(process) -> dict[str, str]:
    try:
        return process.environ()
    except Exception:  # noqa: BLE001 - gone or not ours
        return {}


def _report(config: pytest.Config, title: str, processes: list) -> None:
    lines = [describe(p) for p in processes]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print(title, *lines, sep="\n", file=sys.stderr)
        return
    reporter.write_sep("=", title, red=True)
    for line in lines:
        reporter.write_line(line)
