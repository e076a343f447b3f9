"""Retrieval replicas following a load profile (idle -> ``--clients`` closed-loop clients -> idle) under
``sws serve`` with autoscaling (issue 25 item 1): the ``RetrievalIngress`` replica count from Serve's status,
QPS and p99 per second, as JSON lines and a PNG plot; time to scale up (load start to ``max_replicas``
running), time to scale down (load end to ``min_replicas``), failed requests (goal 0).

First, the measurement ``target_ongoing_requests`` is chosen from: one fixed replica's QPS and p99 at 1, 2, 4,
... closed-loop clients (its ongoing requests); the knee is the least that reaches 90 % of the peak QPS: more
requests per replica only queue, so above it a new replica is what adds throughput.

    python benchmarks/serve_autoscale.py [--clients 256] [--seconds 60] [--plot sws-out/bench/serve_autoscale.png]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from dataclasses import asdict
from pathlib import Path

from loadgen import load, percentile
from serve_common import agent_queries, emit, json_stdout, sample_index
from serve_load import TOKEN

from serve.launch import ServeProcess
from serve.status import StatusWatch, deployment_replicas
from sws.config import AutoscalingSettings

KNEE_SHARE = 0.9  # of the peak QPS: the knee of one replica's sweep
METRICS_PUSH_S = "1"  # replicas' autoscaling metrics (Ray's default 10 s: a minute's profile would miss them)


def replica_samples(watch: StatusWatch, t0: float) -> list[tuple[float, int]]:
    """``(seconds since t0, running RetrievalIngress replicas)`` of every sample of the watch."""
    return [
        (at - t0, states.get("RUNNING", 0))
        for at, status in watch.samples
        if (states := deployment_replicas(status, "RetrievalIngress")) is not None
    ]


def per_second(timeline: list[tuple[float, int, float | None]], offset: float) -> list[dict]:
    """QPS, p99 (ms) and failures per whole second of the load (``offset``: the load's start since t0)."""
    seconds: dict[int, list[tuple[int, float | None]]] = {}
    for sent, status, latency in timeline:
        seconds.setdefault(int(sent), []).append((status, latency))
    rows = []
    for second in sorted(seconds):
        answers = seconds[second]
        latencies = sorted(latency for status, latency in answers if status == 200 and latency is not None)
        rows.append(
            {
                "t": round(offset + second, 1),
                "qps": len(answers),
                "p99_ms": round(percentile(latencies, 0.99) * 1e3, 1) if latencies else None,
                "failed": sum(status != 200 for status, _ in answers),
            }
        )
    return rows


def knee(rows: list[dict]) -> int:
    """The least client count whose QPS reaches ``KNEE_SHARE`` of the sweep's peak.

    Raises:
        ValueError: a level had failed requests (its QPS is not the replica's).
    """
    if failed := {row["clients"]: row["failed"] for row in rows if row["failed"]}:
        raise ValueError(f"failed requests at these client counts: {failed}")
    peak = max(row["qps"] for row in rows)
    return min(row["clients"] for row in rows if row["qps"] >= KNEE_SHARE * peak)


def replica_sweep(index: Path, requests: list, levels: list[int], seconds: float) -> list[dict]:
    """One fixed replica's load summary at each client count (after an unmeasured warm-up)."""
    with ServeProcess(
        index, token=TOKEN, args=["--num-cpus", "2"], log_path=str(index) + "-knee.log"
    ) as server:
        load(server.url, requests, clients=max(levels), seconds=seconds / 2, token=TOKEN)
        return [load(server.url, requests, clients=c, seconds=seconds, token=TOKEN).summary() for c in levels]


def first_at(samples: list[tuple[float, int]], after: float, test) -> float | None:
    return next((t - after for t, n in samples if t >= after and test(n)), None)


def plot(
    path: Path, samples: list[tuple[float, int]], rows: list[dict], load_span: tuple[float, float]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    top.step([t for t, _ in samples], [n for _, n in samples], where="post", label="replicas running")
    top.set_ylabel("replicas")
    top.yaxis.set_major_locator(MaxNLocator(integer=True))
    top.axvspan(*load_span, alpha=0.15, label="load")
    top.legend(loc="upper right")
    bottom.plot([r["t"] for r in rows], [r["qps"] for r in rows], label="QPS")
    bottom.set_ylabel("QPS")
    right = bottom.twinx()
    right.plot([r["t"] for r in rows], [r["p99_ms"] for r in rows], color="tab:red", label="p99 ms")
    right.set_ylabel("p99 (ms)")
    bottom.set_xlabel("seconds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="index directory (default: the bundled sample)")
    parser.add_argument("--clients", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=60.0, help="of load")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds idle before the load")
    parser.add_argument("--max-replicas", type=int, default=2)
    parser.add_argument("--settle", type=float, default=300.0, help="at most this long to scale back down")
    parser.add_argument("--plot", type=Path, default=Path("sws-out/bench/serve_autoscale.png"))
    parser.add_argument("--sweep", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128])
    parser.add_argument("--sweep-seconds", type=float, default=10.0, help="of load per client count")
    parser.add_argument("--quick", action="store_true", help="64 clients, 30 s of load; a sweep to 64 of 5 s")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.seconds, args.sweep, args.sweep_seconds = 64, 30.0, [1, 4, 16, 64], 5.0
    json_stdout()
    os.environ.setdefault("RAY_SERVE_REPLICA_AUTOSCALING_METRIC_PUSH_INTERVAL_S", METRICS_PUSH_S)
    os.environ.setdefault("RAY_SERVE_HANDLE_AUTOSCALING_METRIC_PUSH_INTERVAL_S", METRICS_PUSH_S)
    index = args.index or sample_index()
    requests = [
        ("/call", {"name": "search", "arguments": json.dumps({"query": q, "top_k": 5, "method": "rrf"})})
        for q in agent_queries("questions", 256)
    ]
    sweep = replica_sweep(index, requests, sorted(args.sweep), args.sweep_seconds)
    emit(
        "serve_autoscale",
        "knee",
        share_of_peak=KNEE_SHARE,
        knee_clients=knee(sweep),
        target_ongoing_requests=AutoscalingSettings().target_ongoing_requests,
        sweep=[{k: row[k] for k in ("clients", "qps", "p50_ms", "p99_ms", "failed")} for row in sweep],
    )
    serve_args = [
        "--num-cpus",
        "2",
        "serve.replicas.min_replicas=1",
        f"serve.replicas.max_replicas={args.max_replicas}",
    ]
    with (
        ServeProcess(index, token=TOKEN, args=serve_args, log_path=str(index) + "-autoscale.log") as server,
        StatusWatch(server.ready["ray_address"], interval_s=1.0) as watch,
    ):
        t0 = time.monotonic()
        time.sleep(args.idle)
        load_start = time.monotonic() - t0
        result = load(server.url, requests, clients=args.clients, seconds=args.seconds, token=TOKEN)
        load_end = time.monotonic() - t0
        with contextlib.suppress(TimeoutError):  # not back down within --settle: no scale-down time
            watch.wait(lambda states: states == {"RUNNING": 1}, "RetrievalIngress", args.settle)
        samples = replica_samples(watch, t0)
    rows = per_second(result.timeline, load_start)
    up_s = first_at(samples, load_start, lambda n: n >= args.max_replicas)
    down_s = first_at(samples, load_end, lambda n: n == 1)
    plot(args.plot, samples, rows, (load_start, load_end))
    passed = result.failed == 0 and up_s is not None and down_s is not None
    emit(
        "serve_autoscale",
        "profile",
        **result.summary(),
        max_replicas=args.max_replicas,
        autoscaling=asdict(AutoscalingSettings(min_replicas=1, max_replicas=args.max_replicas)),
        scale_up_s=None if up_s is None else round(up_s, 1),
        scale_down_s=None if down_s is None else round(down_s, 1),
        replicas_over_time=[(round(t, 1), n) for t, n in samples],
        per_second=rows,
        plot=str(args.plot),
        goal="failed == 0, scaled up and back down",
        passed=passed,
    )
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
