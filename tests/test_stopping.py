"""SIGTERM to a long command's whole process group (as ``timeout``, a batch scheduler or a wrapper script
sends it) once it has started real work: it exits 143 within a bound, with its one line last on stderr and
no traceback, and leaves nothing it started running (``sws/stopping.py``; ``sws eval``:
``tests/eval/test_lifecycle.py``, ``sws serve``: ``tests/serve/test_processes.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from sws.stopping import AGAIN
from tests import processes
from tests.serve.process_tree import process_tree, running

pytestmark = pytest.mark.ray
REPO = Path(__file__).resolve().parents[1]
BOUND_S = 300  # a hang guard on the whole command before the signal, and on its stop after it
STOP_S = 90  # the stop: sws/stopping.py's watchdog ends it 60 s after the signal at the latest


def ray_task_running(process: subprocess.Popen, stdout: Path) -> bool:
    """A Ray worker of the command is running a task (not idle): the stage's real work."""
    names = []
    for proc in process_tree(process.pid):
        try:
            names.append(proc.name())
        except psutil.Error:
            pass
    return any(name.startswith("ray::") and name != "ray::IDLE" for name in names)


def stopped(tmp_path: Path, args: list[str], started: Callable[[subprocess.Popen, Path], bool]):
    """Run ``sws ARGS`` in a process group of its own, SIGTERM the group once ``started``; its exit status,
    stderr, and what of its process tree (taken at the signal) still runs."""
    stdout, stderr = tmp_path / "stdout.log", tmp_path / "stderr.log"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_AUTH_MODE": "disabled"}
    with stdout.open("w") as out, stderr.open("w") as err:
        process = processes.popen(
            [sys.executable, "-m", "sws", *args], cwd=tmp_path, env=env, stdout=out, stderr=err
        )
    deadline = time.monotonic() + BOUND_S
    while not started(process, stdout):
        assert process.poll() is None, (
            f"it ended (exit {process.returncode}) first:\n{stderr.read_text()[-3000:]}"
        )
        assert time.monotonic() < deadline, f"not started within {BOUND_S} s:\n{stderr.read_text()[-3000:]}"
        time.sleep(0.1)
    tree = process_tree(process.pid)
    os.killpg(process.pid, signal.SIGTERM)
    code = process.wait(timeout=STOP_S)
    return code, stderr.read_text(), running(tree, within_s=0)


def test_build_corpus_stops_on_sigterm_keeping_its_finished_shards(tmp_path):
    out = tmp_path / "corpus"
    code, stderr, left = stopped(tmp_path, ["build", "corpus", "--out", str(out)], ray_task_running)
    assert code == 143, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted by SIGTERM: the finished shards are kept in {out}; run the same command again to resume"
    )
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr and left == [], (stderr, left)


LOST_IN_A_CALLBACK = """
import os, signal, time, weakref
from sws.stopping import stop_on_signals

class Thing:
    pass

def callback(_):
    os.kill(os.getpid(), signal.SIGTERM)
    sum(range(100_000))  # the handler runs here, where Python ignores the exception it raises

with stop_on_signals(lambda: "nothing to keep"):
    thing = Thing()
    ref = weakref.ref(thing, callback)
    del thing
    time.sleep(60)
print("worked on after the signal")
"""


def test_a_stop_lost_in_a_weakref_callback_is_raised_again():
    """The signal came while the garbage collector ran Ray Data's weakref callback (``sws quickstart`` at
    ``[2/5] indexes`` on a busy machine): Python printed "Exception ignored" and the command worked on until
    the watchdog cut it 60 s later."""
    started = time.monotonic()
    done = processes.run([sys.executable, "-c", LOST_IN_A_CALLBACK], timeout=STOP_S, cwd=REPO)
    assert (done.returncode, done.stderr.strip()) == (143, "interrupted by SIGTERM: nothing to keep")
    assert time.monotonic() - started < 30 and done.stdout == ""


@pytest.mark.parametrize("step", ["[2/5] indexes", "[5/5] evaluation"])
def test_quickstart_stops_on_sigterm(tmp_path, step):
    """The issue: ``sws quickstart --llm smollm2`` ran on 35 s after the signal, mid-evaluation, printing
    nothing (its driver and its local Ray's GCS). Stopped in the evaluation, it is the evaluation's line (or
    the command's, before its first episode)."""
    out = tmp_path / "out"
    code, stderr, left = stopped(
        tmp_path,
        ["quickstart", "--out", str(out), "--questions", "3"],
        lambda process, stdout: step in stdout.read_text(),
    )
    assert code == 143, stderr
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("interrupted by SIGTERM: ") and line.endswith(f"; {AGAIN}")
    if step.endswith("indexes"):
        assert line == f"interrupted by SIGTERM: what was finished is kept in {out}; {AGAIN}"
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr and left == [], (stderr, left)


@pytest.fixture(scope="module")
def built_corpus(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("stopping") / "corpus"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_AUTH_MODE": "disabled"}
    built = processes.run(
        [sys.executable, "-m", "sws", "build", "corpus", "--out", str(corpus)], BOUND_S, env=env
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return corpus


@pytest.mark.parametrize(
    "command, kept", [("index", "the finished vectors and parts"), ("embed", "the finished vector units")]
)
def test_build_index_and_embed_stop_on_sigterm_keeping_what_is_finished(
    tmp_path, built_corpus, command, kept
):
    out = tmp_path / "out"
    args = ["build", command, "--corpus", str(built_corpus), "--out", str(out)]
    code, stderr, left = stopped(tmp_path, args, ray_task_running)
    assert code == 143, stderr
    assert stderr.strip().splitlines()[-1] == f"interrupted by SIGTERM: {kept} are kept in {out}; {AGAIN}"
    assert "Traceback" not in stderr and "SIGTERM received" not in stderr and left == [], (stderr, left)
