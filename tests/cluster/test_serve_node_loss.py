"""``sws serve --ray-address`` on a three-node cluster, one retrieval replica on each worker node; a worker
node is killed under load.

The load ends by count, not by the clock (``tests/serve/counted_load.py``): the kill comes after a number of
answers, the load ends once every client has had a number of answers to requests sent after it, so the 1%
is of a request count the test fixes and holds at any speed.
"""

import json
import time

import pytest
from ray.util.state import list_actors

from tests.serve.cases import QUERIES
from tests.serve.counted_load import run_closed_loop, summary, with_info
from tests.startup import RegisteredServe as ServeProcess

pytestmark = [pytest.mark.ray, pytest.mark.slow]
REQUESTS = with_info(  # every fifth a GET /info: it says which replica answered
    [
        ("/call", {"name": "search", "arguments": json.dumps({"query": f"{q} {i}", "top_k": 5, "method": m})})
        for i, q in enumerate(QUERIES * 4)
        for m in ("keywords", "rrf")
    ]
)
CLIENTS = 16
BEFORE_KILL = 400  # answers before the kill
AFTER_KILL = 75  # then each client goes on until this many answers to requests it sent after the kill
TOTAL_AT_LEAST = BEFORE_KILL + CLIENTS * AFTER_KILL  # 1600 = 100 x CLIENTS: 1% of it is one per client


def _replicas(cluster) -> list[tuple[str, str]]:
    """``(node id, replica id)`` of each alive retrieval replica (its actor's name is the replica id)."""
    actors = list_actors(
        address=cluster.dashboard_url, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False
    )
    return sorted(
        (a.node_id, a.name) for a in actors if a.class_name.startswith("ServeReplica:sws:Retrieval")
    )


def _replica_nodes(cluster) -> list[str]:
    """The node of each alive retrieval replica."""
    return [node for node, _ in _replicas(cluster)]


def _wait(condition, what: str, timeout_s: float = 180.0):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(1.0)
    return value


def test_serve_survives_a_lost_worker_node_under_load(cluster, leads_root, tmp_path):
    doomed, survivor = cluster.workers()
    a, b = doomed.node_id, survivor.node_id
    args = ["--ray-address", cluster.gcs_address, "--ingress", "proxy", "--replicas", "2", "--no-batching"]
    with ServeProcess(leads_root / "index", args=args, log_path=tmp_path / "serve.log") as server:
        _wait(lambda: _replica_nodes(cluster) == sorted([a, b]), "a replica on each worker node")
        lost = {replica for node, replica in _replicas(cluster) if node == a}
        killed_at: list[float] = []

        def kill_once(answers) -> None:
            if not killed_at and len(answers) >= BEFORE_KILL:
                cluster.kill(doomed)
                killed_at.append(time.perf_counter())

        def enough(mine) -> bool:
            return bool(killed_at) and sum(x.started > killed_at[0] for x in mine) >= AFTER_KILL

        answers = run_closed_loop(server.url, REQUESTS, clients=CLIENTS, until=enough, on_answer=kill_once)
        report = summary(answers)
        print(report)
        assert len(answers) >= TOTAL_AT_LEAST, report  # by construction: the 1% is of at least this many
        assert sum(not x.ok for x in answers) <= 0.01 * len(answers), report
        # requests sent after the kill were answered, never by the lost node's replica: the kill took, and
        # the other node's replica kept answering
        sent_after = [x for x in answers if x.started > killed_at[0]]
        after = {json.loads(x.body)["replica"] for x in sent_after if x.ok and x.path == "/info"}
        assert after and not after & lost, (lost, after)
        _wait(lambda: _replica_nodes(cluster) == [b, b], "2 replicas back on the surviving node")
