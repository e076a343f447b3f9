"""``benchmarks/serve_autoscale.py``'s series: per-second QPS, p99 and failures of the load's timeline, and the
scale-up/down times read from the replica samples, and the knee of one replica's sweep."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.benchmarks.conftest import bench_module


def test_per_second_rows_count_every_request_and_the_p99_of_the_answered():
    autoscale = bench_module("serve_autoscale")
    timeline = [(0.1, 200, 0.010), (0.5, 200, 0.030), (0.9, 503, 0.001), (1.2, -1, None), (1.5, 200, 0.020)]
    assert autoscale.per_second(timeline, offset=10.0) == [
        {"t": 10.0, "qps": 3, "p99_ms": 30.0, "failed": 1},
        {"t": 11.0, "qps": 2, "p99_ms": 20.0, "failed": 1},
    ]


@pytest.mark.parametrize(("after", "want", "expected"), [(5.0, 2, 4.0), (12.0, 1, 3.0), (20.0, 3, None)])
def test_scale_times_are_from_the_first_sample_that_reached_the_count(after, want, expected):
    samples = [(0.0, 1), (6.0, 1), (9.0, 2), (11.0, 2), (15.0, 1)]
    reached = bench_module("serve_autoscale").first_at(samples, after, lambda n: n == want)
    assert reached == expected


def test_the_knee_is_the_least_client_count_at_nine_tenths_of_the_peak():
    rows = [(1, 20.0), (4, 70.0), (16, 91.0), (64, 100.0), (128, 96.0)]
    sweep = [{"clients": c, "qps": q, "failed": 0} for c, q in rows]
    assert bench_module("serve_autoscale").knee(sweep) == 16


def test_a_sweep_with_failed_requests_has_no_knee():
    sweep = [{"clients": 1, "qps": 900.0, "failed": 9000}, {"clients": 4, "qps": 50.0, "failed": 0}]
    with pytest.raises(ValueError, match=r"\{1: 9000\}"):
        bench_module("serve_autoscale").knee(sweep)


def test_replica_samples_count_the_running_ones_of_each_status_that_has_the_deployment():
    def status(states):
        return {"sws": {"deployments": {"RetrievalIngress": {"replicas": states}}}}

    watch = SimpleNamespace(
        samples=[(10.0, {}), (11.0, status({"RUNNING": 1})), (12.5, status({"RUNNING": 1, "STARTING": 1}))]
    )
    assert bench_module("serve_autoscale").replica_samples(watch, t0=10.0) == [(1.0, 1), (2.5, 1)]
