"""Harness overhead of the agent loop, and the Ray runner at scale (issue 5, "Benchmark" and "Scale").

``overhead`` (default): episodes of the scripted ``search_then_submit`` policy (2 LLM calls and 1 tool call
each) against the scripted OpenAI-compatible server in its own process, with in-process tools that return a
fixed search observation, at 100 and 1,000 concurrent episodes, with 0 ms and 200 ms of LLM latency. One JSON
line per condition: episodes/s and rounds/s; the ideal rounds/s when the LLM latency is the only limit
(concurrency / latency); the client's CPU ms per round (the harness overhead: loop, HTTP client, JSON, history
compression); the server's CPU ms per request (the stand-in LLM's own cost, which bounds the 0 ms case on a
2-core box); and the client's peak RSS growth per in-flight episode.

``ray``: the runner (``sws.eval.runner.run_evaluation``) with 1,000 concurrent episodes (2 workers x 500)
over ``--items`` synthetic questions, 200 ms latency; reports wall time, completion (every id recorded
exactly once) and the peak RSS of the driver and the worker processes. With ``--kill-driver-at-parts K``
the driver runs in a subprocess that is SIGKILLed once K part files exist, then runs again (resume), and
the record count per id is checked.

    python benchmarks/eval_harness.py overhead [--quick]
    python benchmarks/eval_harness.py ray [--items 3000] [--kill-driver-at-parts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python benchmarks/eval_harness.py` without installing
    sys.path.insert(0, str(REPO))

from sws.agent import AgentConfig, LLMEndpoint, LLMSettings, SearchAgent

OBSERVATION = "1. [William Shakespeare](https://en.wikipedia.org/wiki/1#chunk-1)\n   - " + "playwright " * 90


class FixedTools:
    """In-process tools with no cost of their own: the harness is what is measured."""

    def call_tool(self, name: str, arguments_json: str) -> str:
        return OBSERVATION


def machine_info() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ScriptedServerProcess:
    """``python -m sws.agent.scripted_server`` on a free port, in its own process."""

    def __init__(self, latency_s: float = 0.0, policy: str = "search_then_submit"):
        cmd = [sys.executable, "-m", "sws.agent.scripted_server", "--policy", policy, "--port", "0"]
        cmd += ["--latency", str(latency_s)]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        self.url = line.split(" at ")[1].split()[0]

    def close(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def run_concurrent(url: str, concurrency: int, episodes: int) -> dict:
    llm = LLMEndpoint(url, max_concurrency=concurrency, timeout=120)
    agent = SearchAgent(llm, FixedTools(), AgentConfig(model="search_then_submit"))
    gate = asyncio.Semaphore(concurrency)
    rounds = errors = 0

    async def one(i: int) -> None:
        nonlocal rounds, errors
        async with gate:
            ep = await agent.run(f"Who wrote play number {i}?", i)
        rounds += ep.rounds
        errors += ep.status == "error"

    await asyncio.gather(*(one(i) for i in range(episodes)))
    await llm.close()
    return {"rounds": rounds, "errors": errors}


def overhead_condition(url: str, server_pid: int, latency: float, concurrency: int, episodes: int) -> None:
    """One condition in a fresh process, so that its peak RSS is its own (at least its first and last reading)."""
    base_rss = rss_mb()
    peak = [base_rss]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu0, srv0, t0 = time.process_time(), cpu_s(server_pid), time.perf_counter()
    result = asyncio.run(run_concurrent(url, concurrency, episodes))
    wall = time.perf_counter() - t0
    cpu, srv = time.process_time() - cpu0, cpu_s(server_pid) - srv0
    stop.set()
    sampler.join()
    peak[0] = max(peak[0], rss_mb())
    rounds = result["rounds"]
    ideal_wall = -(-episodes // concurrency) * (rounds / episodes) * latency
    emit(
        {
            "bench": "eval_harness_overhead",
            "llm_latency_ms": latency * 1000,
            "concurrency": concurrency,
            "episodes": episodes,
            "errors": result["errors"],
            "wall_s": round(wall, 2),
            "episodes_per_s": round(episodes / wall, 1),
            "rounds_per_s": round(rounds / wall, 1),
            "llm_bound_wall_s": round(ideal_wall, 2) if latency else None,
            "llm_bound_share": round(ideal_wall / wall, 3) if latency else None,
            "client_cpu_ms_per_round": round(1000 * cpu / rounds, 3),
            "server_cpu_ms_per_request": round(1000 * srv / rounds, 3),
            "rss_growth_kb_per_in_flight_episode": round(1024 * (peak[0] - base_rss) / concurrency, 1),
        }
    )


def overhead(quick: bool) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for latency in (0.0, 0.2):
        server = ScriptedServerProcess(latency)
        try:
            for concurrency in (100, 1000):
                episodes = (1 if quick else 5) * concurrency
                cmd = [sys.executable, __file__, "_overhead", "--url", server.url, "--server-pid"]
                cmd += [str(server.proc.pid), "--latency", str(latency), "--concurrency", str(concurrency)]
                cmd += ["--items", str(episodes)]
                subprocess.run(cmd, env=env, check=True)
        finally:
            server.close()


def ray_driver(out: str, url: str, items: int) -> None:
    """The runner as the benchmark drives it (also the subprocess killed by ``--kill-driver-at-parts``)."""
    from sws.eval import EvalSpec, QAItem
    from sws.eval.runner import run_evaluation
    from sws.raykit import init_ray

    init_ray(num_cpus=2)
    peak = {"workers_rss_mb": 0.0, "driver_rss_mb": 0.0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            total = 0.0
            for pid in os.listdir("/proc"):
                try:
                    if pid.isdigit() and b"EpisodeWorker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        total += rss_mb(pid)
                except OSError:
                    continue
            peak["workers_rss_mb"] = max(peak["workers_rss_mb"], total)
            peak["driver_rss_mb"] = max(peak["driver_rss_mb"], rss_mb())
            time.sleep(0.5)

    threading.Thread(target=sample, daemon=True).start()
    questions = [
        QAItem(f"b{i:05d}", f"Who wrote play {i}?", "William Shakespeare", (), "default", "Bamboogle")
        for i in range(items)
    ]
    spec = EvalSpec(
        questions,
        out,
        AgentConfig(model="search_then_submit"),
        LLMSettings(url, max_concurrency=1000, timeout=120),
        FixedTools,
        "bench",
        dataset="Bamboogle",
        workers=2,
        episodes_per_worker=500,
        progress=False,
    )
    summary = run_evaluation(spec)
    stop.set()
    result = {"recorded": summary.recorded, "missing": len(summary.missing), "ran": summary.ran}
    result |= {"elapsed_s": round(summary.elapsed_s, 2)} | {k: round(v, 1) for k, v in peak.items()}
    print(json.dumps(result), flush=True)


def ray_scale(items: int, kill_at_parts: int) -> None:
    import pyarrow.parquet as pq

    from sws.eval.results import part_files

    server = ScriptedServerProcess(0.2)
    out = tempfile.mkdtemp(prefix="sws-eval-bench-")
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_AUTH_MODE": "disabled"}
    cmd = [sys.executable, __file__, "_driver", "--out", out, "--url", server.url, "--items", str(items)]
    try:
        runs = []
        if kill_at_parts:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
            t0 = time.perf_counter()
            while len(part_files(out)) < kill_at_parts and proc.poll() is None:
                time.sleep(0.05)
            proc.kill()
            proc.wait()
            recorded = sum(pq.read_metadata(p).num_rows for p in part_files(out))
            runs.append({"killed_after_s": round(time.perf_counter() - t0, 2), "records_at_kill": recorded})
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)
        runs.append(
            {"wall_s": round(time.perf_counter() - t0, 2), **json.loads(done.stdout.strip().splitlines()[-1])}
        )
        ids = [i for p in part_files(out) for i in pq.read_table(p, columns=["id"])["id"].to_pylist()]
        emit(
            {
                "bench": "eval_runner_scale",
                "items": items,
                "concurrency": 1000,
                "llm_latency_ms": 200,
                "runs": runs,
                "records": len(ids),
                "unique_ids": len(set(ids)),
                "exactly_once": len(ids) == len(set(ids)) == items,
            }
        )
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "mode", nargs="?", default="overhead", choices=["overhead", "ray", "_driver", "_overhead"]
    )
    parser.add_argument("--quick", action="store_true", help="fewer episodes per condition")
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--kill-driver-at-parts", type=int, default=0, help="ray: SIGKILL the driver then")
    parser.add_argument("--out")
    parser.add_argument("--url")
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    if args.mode == "_driver":
        ray_driver(args.out, args.url, args.items)
        return
    if args.mode == "_overhead":
        overhead_condition(args.url, args.server_pid, args.latency, args.concurrency, args.items)
        return
    emit({"machine": machine_info()})
    if args.mode == "overhead":
        overhead(args.quick)
    else:
        ray_scale(args.items, args.kill_driver_at_parts)


if __name__ == "__main__":
    main()
