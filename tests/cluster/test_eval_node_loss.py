"""``ray_jobs/evaluate.py`` submitted to a three-node cluster, episode workers on both worker nodes, against
the scripted LLM server; a worker node is killed mid-run."""

import sys
import time

import pyarrow.parquet as pq
import pytest
from ray.util.state import list_actors

from sws.agent.scripted_server import Faults, ScriptedLLMServer
from sws.eval.datasets import load_dataset, select
from sws.eval.results import part_files
from tests.ray_cluster import REPO, assert_job_running, submit_job, wait_job

pytestmark = [pytest.mark.ray, pytest.mark.slow]
DATA = REPO / "sws" / "data" / "bamboogle_test.flashrag.jsonl"
N_ITEMS = 60


def _workers(cluster) -> dict[str, str]:
    """``{actor id: node id}`` of the alive episode workers."""
    actors = list_actors(
        address=cluster.dashboard_url,
        filters=[("class_name", "=", "EpisodeWorker"), ("state", "=", "ALIVE")],
        raise_on_missing_output=False,
    )
    return {a.actor_id: a.node_id for a in actors}


def test_eval_job_records_every_item_once_after_a_lost_worker_node(cluster, leads_root, tmp_path):
    out = tmp_path / "run"
    with ScriptedLLMServer(faults=Faults(latency_s=0.2), record_requests=False) as server:
        entrypoint = [
            sys.executable,
            "ray_jobs/evaluate.py",
            "--dataset=bamboogle",
            f"--data={DATA}",
            f"--limit={N_ITEMS}",
            f"--llm-base-url={server.url}",
            "--model=search_then_submit",
            f"--index={leads_root / 'index'}",
            f"--out={out}",
            "eval.workers=2",
            "eval.episodes_per_worker=4",
        ]
        job = submit_job(cluster.dashboard_url, entrypoint)
        workers = {n.node_id for n in cluster.workers()}
        deadline = time.monotonic() + 300
        while set(_workers(cluster).values()) != workers or server.llm.stats["requests"] < 10:
            assert time.monotonic() < deadline, (
                f"episode workers not running on both nodes: {_workers(cluster)}"
            )
            assert_job_running(cluster.dashboard_url, job)
            time.sleep(0.5)
        cluster.kill(cluster.workers()[0])
        assert server.llm.stats["requests"] < 2 * N_ITEMS  # mid-run: each episode asks twice
        status, logs = wait_job(cluster.dashboard_url, job)
        if status != "SUCCEEDED":  # the documented recovery: rerun, recorded items are skipped
            status, logs = wait_job(cluster.dashboard_url, submit_job(cluster.dashboard_url, entrypoint))
        assert status == "SUCCEEDED", logs[-3000:]

    ids = [p for path in part_files(out) for p in pq.read_table(path, columns=["id"])["id"].to_pylist()]
    items = select(load_dataset(DATA, "bamboogle"), "full_test")[:N_ITEMS]
    assert sorted(ids) == sorted(item.id for item in items)  # each recorded exactly once
