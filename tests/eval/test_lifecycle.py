"""A run's life as a process: one ``sws eval`` per results directory (an OS lock, released however its holder
ends), and SIGINT/SIGTERM that record what has finished and exit 128 + the signal.

Real ``sws eval`` subprocesses (each with its own local Ray) run one episode at a time against a scripted LLM
that holds the requests of one question until released: when that question's first request arrives, the
episodes before it have finished (their records buffered in the worker, not yet written) and the run is
still going, whatever the machine's speed. Resumes run in this process, on the session's Ray.
"""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from sws.agent.scripted_server import ScriptedLLM, create_app
from sws.cli import cli
from sws.eval.datasets import load_dataset
from sws.eval.results import part_files, recorded_status
from tests import processes
from tests.ui.helpers import ServedApp

REPO = Path(__file__).resolve().parents[2]
BAMBOOGLE = REPO / "tests" / "data" / "qa" / "bamboogle_test.flashrag.jsonl"
ITEMS = load_dataset(BAMBOOGLE, "Bamboogle")[:5]
BOUND_S = 300  # how long a subprocess may take to get somewhere before the test fails (not a measurement)


class HeldLLM(ScriptedLLM):
    """The scripted LLM (search, then submit), except that requests for the question ``held`` wait until
    :attr:`release` is set; :attr:`arrived` is set when the first of them comes in."""

    def __init__(self, held: str):
        super().__init__(policy="search_then_submit", record_requests=False)
        self.held = held.strip()
        self.arrived, self.release = threading.Event(), threading.Event()

    async def handle(self, body):
        if any(m.get("role") == "user" and m.get("content") == self.held for m in body.get("messages") or []):
            self.arrived.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        return await super().handle(body)


@contextlib.contextmanager
def held_llm(held: str = ""):
    """A :class:`HeldLLM` on 127.0.0.1 and its base URL; released on exit."""
    llm = HeldLLM(held)
    with ServedApp(create_app(llm)) as served:
        try:
            yield llm, f"{served.url}/v1"
        finally:
            llm.release.set()


def eval_args(url: str, index: Path, out: Path) -> list[str]:
    args = ["eval", "--dataset", "Bamboogle", "--data", str(BAMBOOGLE), "--limit", str(len(ITEMS))]
    args += ["--index", str(index), "--out", str(out), "--llm-base-url", url, "--model", "search_then_submit"]
    return [*args, "eval.workers=1", "eval.episodes_per_worker=1"]


@contextlib.contextmanager
def eval_process(args: list[str], log: Path):
    """``python -m sws ARGS`` with its own local Ray, its output to ``log``; killed if still running."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"RAY_AUTH_MODE": "disabled"}
    with log.open("w") as out:
        process = processes.popen(
            [sys.executable, "-m", "sws", *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=BOUND_S)


def wait_for(event: threading.Event, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + BOUND_S
    while not event.wait(0.2):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the held request never came (exit {process.poll()}):\n{log.read_text()[-3000:]}")


def resume(index: Path, out: Path) -> dict:
    """The same command again, in this process, with nothing held; its summary."""
    with held_llm() as (_, url):
        result = CliRunner().invoke(cli, eval_args(url, index, out))
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{") :])


def recorded_ids(out: Path) -> list[str]:
    return sorted(i for p in part_files(out) for i in pq.read_table(p, columns=["id"])["id"].to_pylist())


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.ray
@pytest.mark.usefixtures("ray_local")
def test_a_stop_signal_records_what_has_finished(leads_root, tmp_path, stop):
    """The issue: SIGTERM gave exit 1 after Ray's stack dump, and finished episodes still in a worker's buffer
    were lost (the rerun did them again)."""
    index, out, log = leads_root / "index", tmp_path / "run", tmp_path / "eval.log"
    with held_llm(ITEMS[3].question) as (llm, url), eval_process(eval_args(url, index, out), log) as process:
        wait_for(llm.arrived, process, log)  # episodes 0-2 have finished, 3 is in flight
        process.send_signal(stop)
        code = process.wait(timeout=BOUND_S)
    output = log.read_text()
    assert code == 128 + stop, output
    assert output.strip().splitlines()[-1] == (
        f"interrupted by {stop.name}: 3 of 5 episodes recorded in {out}; run the same command again to resume"
    )
    assert "SIGTERM received" not in output and "Traceback" not in output, output
    assert sorted(recorded_status(out)) == [item.id for item in ITEMS[:3]]

    summary = resume(index, out)
    assert (summary["ran"], summary["recorded"], summary["missing"]) == (2, 5, [])
    assert recorded_ids(out) == sorted(item.id for item in ITEMS)  # each exactly once


@pytest.mark.ray
@pytest.mark.usefixtures("ray_local")
def test_one_eval_per_results_directory(leads_root, tmp_path):
    """The issue: two ``sws eval`` on one --out both ran everything (twice the rows, twice the LLM cost)."""
    index, out, log = leads_root / "index", tmp_path / "run", tmp_path / "eval.log"
    with held_llm(ITEMS[0].question) as (llm, url), eval_process(eval_args(url, index, out), log) as holder:
        wait_for(llm.arrived, holder, log)  # the holder is running
        # (a short LLM timeout bounds this run's held episode, should it not be refused)
        second = CliRunner().invoke(cli, [*eval_args(url, index, out), "eval.timeout_s=2"])
        assert second.exit_code == 1 and isinstance(second.exception, SystemExit), second.output
        assert second.output.strip().splitlines()[-1] == (
            f"Error: {out} is in use by another sws eval (PID {holder.pid}); wait for it to end or use "
            "another --out directory"
        )
        holder.kill()  # a crash: the kernel releases the lock
        holder.wait(timeout=BOUND_S)
    summary = resume(index, out)
    assert (summary["ran"], summary["recorded"]) == (5, 5)
    assert recorded_ids(out) == sorted(item.id for item in ITEMS)


def test_a_second_stop_signal_ends_the_process_at_once():
    """The first signal only asks the run to stop; a second (a flush that hangs) ends it as without handlers."""
    code = (
        "import os, signal\n"
        "from sws.eval.interrupt import stop_signals\n"
        "with stop_signals() as stop:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    print('asked', stop.signum == signal.SIGTERM, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    print('still running', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=REPO, capture_output=True, text=True, timeout=BOUND_S
    )
    assert (done.returncode, done.stdout) == (-signal.SIGTERM, "asked True\n"), done.stderr
