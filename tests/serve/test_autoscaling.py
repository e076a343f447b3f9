"""Retrieval replicas that follow the load, under a real ``sws serve`` (HAProxy ingress) on 127.0.0.1: a step
from idle to 32 closed-loop clients (rrf searches: each waits on the query embedder, so they pile up) scales ``RetrievalIngress`` from 1 to 2 replicas; when the load drops to
one client the extra replica is drained and removed; no request fails in either transition. Short delays and
metric intervals, as Ray's own autoscaling tests use; replica counts are read from Serve's status, the waits
are hang guards, not measurements (``benchmarks/serve_autoscale.py`` times them)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from serve.status import StatusWatch
from tests.serve.cases import QUERIES
from tests.serve.conftest import TOKEN
from tests.serve.counted_load import Answer, run_closed_loop, summary
from tests.startup import RegisteredServe as ServeProcess

pytestmark = [pytest.mark.ray, pytest.mark.slow]
REPLICAS = {
    "min_replicas": 1,
    "max_replicas": 2,
    "target_ongoing_requests": 2,
    "upscale_delay_s": 1,
    "downscale_delay_s": 3,
    "look_back_period_s": 2,
}
METRICS_PUSH_S = "0.5"  # replicas' and handles' autoscaling metrics (Ray's default: 10 s)
CLIENTS = 32
GUARD_S = 240.0


def wait_replicas(watch: StatusWatch, running: int) -> None:
    """Until exactly ``running`` replicas run and none starts or stops."""
    watch.wait(lambda states: states == {"RUNNING": running}, "RetrievalIngress", GUARD_S)


def test_replicas_scale_up_under_load_and_drain_down_without_a_failed_request(
    serve_index, tmp_path, monkeypatch
):
    monkeypatch.setenv("RAY_SERVE_REPLICA_AUTOSCALING_METRIC_PUSH_INTERVAL_S", METRICS_PUSH_S)
    monkeypatch.setenv("RAY_SERVE_HANDLE_AUTOSCALING_METRIC_PUSH_INTERVAL_S", METRICS_PUSH_S)
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    args = ["--num-cpus", "2", *(f"serve.replicas.{key}={value}" for key, value in REPLICAS.items())]
    requests = [
        ("/call", {"name": "search", "arguments": json.dumps({"query": q, "top_k": 5, "method": "rrf"})})
        for q in QUERIES
    ]
    phase = {"now": "step"}  # step: every client sends; light: client 0 alone; done: none

    def until(mine: list[Answer]) -> bool:
        return phase["now"] == "done" or (phase["now"] == "light" and bool(mine) and mine[0].client != 0)

    with (
        ServeProcess(serve_index, token=TOKEN, args=args, log_path=tmp_path / "serve.log") as server,
        StatusWatch(server.ready["ray_address"]) as watch,
    ):
        wait_replicas(watch, 1)
        answers: list[Answer] = []
        load = threading.Thread(
            target=lambda: answers.extend(
                run_closed_loop(server.url, requests, clients=CLIENTS, until=until, token=TOKEN)
            )
        )
        load.start()
        try:
            wait_replicas(watch, 2)
            phase["now"] = "light"
            light_from = time.perf_counter()
            wait_replicas(watch, 1)
            light_to = time.perf_counter()
        finally:
            phase["now"] = "done"
            load.join(GUARD_S)
    report = summary(answers)
    assert answers and all(a.ok for a in answers), report
    during_downscale = [a for a in answers if light_from < a.started < light_to]
    assert during_downscale, report  # the removed replica's traffic moved while one client kept sending
