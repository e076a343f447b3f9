"""``sws serve --ray-address`` on a three-node cluster, one retrieval replica on each worker node; a worker
node is killed under load."""

import json
import threading
import time

import pytest
from ray.util.state import list_actors

from serve.launch import ServeProcess
from tests.benchmarks.conftest import bench_module
from tests.serve.cases import QUERIES

load = bench_module("loadgen").load  # the benchmarks' load generator
pytestmark = [pytest.mark.ray, pytest.mark.slow]
REQUESTS = [
    ("/call", {"name": "search", "arguments": json.dumps({"query": f"{q} {i}", "top_k": 5, "method": m})})
    for i, q in enumerate(QUERIES * 4)
    for m in ("keywords", "rrf")
]


def _replica_nodes(cluster) -> list[str]:
    """The node of each alive retrieval replica."""
    actors = list_actors(
        address=cluster.dashboard_url, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False
    )
    return sorted(a.node_id for a in actors if a.class_name.startswith("ServeReplica:sws:Retrieval"))


def _wait(condition, what: str, timeout_s: float = 180.0):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(1.0)
    return value


def test_serve_survives_a_lost_worker_node_under_load(cluster, leads_root, tmp_path):
    a, b = (n.node_id for n in cluster.nodes[1:])
    args = ["--ray-address", cluster.gcs_address, "--ingress", "proxy", "--replicas", "2", "--no-batching"]
    with ServeProcess(leads_root / "index", args=args, log_path=tmp_path / "serve.log") as server:
        _wait(lambda: _replica_nodes(cluster) == sorted([a, b]), "a replica on each worker node")
        outcome = {}
        thread = threading.Thread(
            target=lambda: outcome.setdefault("result", load(server.url, REQUESTS, clients=16, seconds=25.0))
        )
        thread.start()
        time.sleep(5.0)
        cluster.kill(cluster.nodes[1])
        thread.join()
        summary = outcome["result"].summary()
        print(summary)
        assert outcome["result"].requests > 200, summary
        assert outcome["result"].failed <= 0.01 * outcome["result"].requests, summary
        _wait(lambda: _replica_nodes(cluster) == [b, b], "2 replicas back on the surviving node")
