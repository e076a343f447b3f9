"""The test process registry (``tests/processes.py``, ``tests/process_plugin.py``): a run of its own (a
``pytest`` subprocess with only the plugin) starts a process group, then ends as a hung fixture, an interrupt
or a crashed xdist worker ends it; nothing of it may be left running, and a process of the run left running
fails the run, named, while a process that is not the run's is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tests.processes import RUN_ENV, Registry, popen

REPO = Path(__file__).resolve().parents[1]
BOUND_S = 120  # a hang guard: each inner run takes seconds
# a process group: a leader that starts a child, writes both PIDs to argv[1], and sleeps
GROUP = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
    "open(sys.argv[1], 'w').write(f'{child.pid} {__import__(\"os\").getpid()}')\n"
    "time.sleep(600)\n"
)
PRELUDE = f"""
import os, subprocess, sys, time
from pathlib import Path
import pytest
from tests.processes import popen

GROUP = {GROUP!r}
PIDS = Path(__file__).parent / "pids"

def start_group():
    popen([sys.executable, "-c", GROUP, str(PIDS)])
    while not PIDS.exists() or len(PIDS.read_text().split()) < 2:
        time.sleep(0.05)
"""


def inner_run(tmp_path: Path, body: str, *args: str, wait: bool = True):
    """``pytest`` on a file of ``PRELUDE`` + ``body`` with only the registry's plugin, in ``tmp_path``."""
    pids = tmp_path / "pids"
    test = tmp_path / "test_inner.py"
    test.write_text(PRELUDE + textwrap.dedent(body))
    command = [sys.executable, "-m", "pytest", "-p", "tests.process_plugin", "-p", "no:cacheprovider", "-q"]
    command += ["-o", "process_settle_s=2", *args, str(test)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if not wait:
        return process, pids
    output, _ = process.communicate(timeout=BOUND_S)
    return process.returncode, output, [int(pid) for pid in pids.read_text().split()]


def running(pids: list[int], within_s: float = 10.0) -> list[int]:
    """Those of ``pids`` still running (zombies aside) once all ended or ``within_s`` passed."""
    deadline = time.monotonic() + within_s
    while True:
        left = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    left.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def test_a_fixture_that_times_out_in_its_setup_has_its_processes_ended(tmp_path):
    """The issue: ``sws serve --llm``'s fixture hit pytest-timeout in its setup; its process tree ran on."""
    code, output, pids = inner_run(
        tmp_path,
        """
        @pytest.fixture(scope="module")
        def server():
            start_group()
            time.sleep(600)  # never ready
            yield

        @pytest.mark.timeout(10)  # long after its group has started
        def test_served(server):
            pass
        """,
    )
    assert code == 1 and "Timeout" in output, output
    assert "still running at its end" not in output, output  # the fixture's end ended them, not the sweep
    assert running(pids, within_s=0) == []


@pytest.mark.parametrize(
    ("stop", "args", "code"),
    [
        (signal.SIGTERM, (), -signal.SIGTERM),
        (signal.SIGINT, (), 2),
        (signal.SIGTERM, ("-n", "1"), -signal.SIGTERM),
    ],
    ids=["SIGTERM", "SIGINT", "SIGTERM-xdist"],
)
def test_a_run_stopped_by_a_signal_ends_its_processes(tmp_path, stop, args, code):
    """The signal to the run's (controller) process alone, as ``timeout`` sends it."""
    body = "def test_holds():\n    start_group()\n    time.sleep(600)\n"
    process, pids = inner_run(tmp_path, body, *args, wait=False)
    deadline = time.monotonic() + BOUND_S
    while not pids.exists() or len(pids.read_text().split()) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0]
        time.sleep(0.05)
    process.send_signal(stop)
    output, _ = process.communicate(timeout=BOUND_S)
    assert process.returncode == code, output
    assert running([int(pid) for pid in pids.read_text().split()], within_s=0) == []


def test_a_crashed_xdist_worker_has_its_processes_ended(tmp_path):
    code, output, pids = inner_run(
        tmp_path, "def test_crashes():\n    start_group()\n    os._exit(3)\n", "-n", "1"
    )
    assert code == 1 and "crashed" in output, output
    assert "ending the processes of crashed worker gw0" in output, output
    assert running(pids) == []


def test_a_process_of_the_run_left_running_fails_the_run_naming_it(tmp_path):
    """A process started outside the registry (an orphan: its parent has exited) is found by its marker; a
    process without the marker (the developer's own) is not the run's: not named, not touched."""
    theirs = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        env={k: v for k, v in os.environ.items() if k != RUN_ENV},
    )
    try:
        code, output, pids = inner_run(
            tmp_path,
            """
            SLEEPER = "[sys.executable, '-c', 'import time; time.sleep(600)']"
            QUIET = "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"
            ORPHAN = f"import subprocess, sys; print(subprocess.Popen({SLEEPER}, {QUIET}).pid)"

            def test_leaves_an_orphan():
                done = subprocess.run([sys.executable, "-c", ORPHAN], capture_output=True, text=True)
                PIDS.write_text(done.stdout)
            """,
        )
        assert code == 1 and "1 passed" in output, output
        assert "processes of this run still running at its end (ended now)" in output, output
        assert any(line.startswith(f"{pids[0]} ") for line in output.splitlines()), output
        assert str(theirs.pid) not in output and theirs.poll() is None
        assert running(pids, within_s=0) == []
    finally:
        theirs.kill()
        theirs.wait()


def test_ending_an_owner_ends_its_groups_only_sigkill_after_the_grace():
    """A member that ignores SIGTERM is killed after the grace; a group registered for another owner (a
    cluster's node added while a test runs) runs on."""
    registry = Registry()
    stubborn = (
        "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); input()"
    )
    with registry.owner("test"):
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
        a = subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True, **pipes)
        assert a.stdout.readline() == "ready\n"  # SIGTERM is ignored from now on
        registry.register(a.pid, "a")
        b = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
        registry.register(b.pid, "b", owner="cluster")
    try:
        registry.end("test", grace_s=0.5)
        assert a.wait(timeout=BOUND_S) == -signal.SIGKILL
        assert b.poll() is None and [g.what for g in registry.groups] == ["b"]
    finally:
        registry.end()
    assert b.wait(timeout=BOUND_S) == -signal.SIGTERM


def test_what_a_test_starts_is_ended_at_its_teardown(tmp_path):
    code, output, _ = inner_run(
        tmp_path,
        """
        import psutil

        def test_starts_a_group():
            start_group()

        def test_it_has_ended_by_the_next_test():
            for pid in map(int, PIDS.read_text().split()):
                assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        """,
    )
    assert code == 0 and "2 passed" in output, output
