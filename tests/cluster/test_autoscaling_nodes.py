"""Ray's autoscaler adds nodes for demand and removes them when idle, on a loopback cluster whose node types are
``configs/cluster.yaml``'s (``loopback_provider.py``: a head without CPUs, CPU and GPU workers from zero):
a corpus build submitted with ``ray job submit`` gets CPU workers, the embedding of its chunks with
``embed.num_gpus=1`` (the paper profile's) gets a GPU worker, whose GPU is logical here, so the work runs on
its CPU and the job's log says so; once the jobs are done every worker is removed within the idle timeout.
Nothing here runs ``ray stop`` (Ray's ``AutoscalingCluster`` does): the cluster's processes are stopped by PID.
Both outputs are byte for byte those of the same stages in this process. The node list is the autoscaled
cluster's own (the state API), sampled every second."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest
from ray.util.state import list_nodes

from sws.config import load_config
from sws.corpus.multistream import pack_multistream
from sws.index.embed_job import embed_corpus
from sws.stages import embedder_spec
from tests.cluster.builds import assert_same_parts, corpus_in_process
from tests.cluster.loopback_provider import NODE_TYPE_LABEL, cluster_yaml, loopback_config
from tests.conftest import DATA
from tests.ray_cluster import LoopbackCluster, submit_job, wait_job

pytestmark = [pytest.mark.ray, pytest.mark.slow]
IDLE_TIMEOUT_MIN = 0.25
DUMP = DATA / "dumpster-dive_tinywiki-pages-articles.xml"  # 8 real pages: the jobs are about nodes, not size
SHARDS = 8  # a page per shard: more CPUs than two 2-CPU workers have


class NodeWatch(threading.Thread):
    """The alive nodes' types (``{node id: type}``), sampled every second from the cluster's state API."""

    def __init__(self, dashboard_url: str):
        super().__init__(daemon=True)
        self.url, self.samples, self.done = dashboard_url, [], threading.Event()

    def run(self) -> None:
        while not self.done.wait(1.0):
            nodes = list_nodes(
                address=self.url, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False
            )
            self.samples.append(
                (time.monotonic(), {n.node_id: n.labels.get(NODE_TYPE_LABEL, "head") for n in nodes})
            )

    def types_since(self, start: float) -> set[str]:
        return {t for at, nodes in self.samples if at >= start for t in nodes.values()}

    def nodes_of(self, node_type: str) -> set[str]:
        return {node for _, nodes in self.samples for node, t in nodes.items() if t == node_type}

    def now(self) -> dict[str, str]:
        return self.samples[-1][1] if self.samples else {}


@pytest.fixture
def autoscaling_cluster():
    cluster = LoopbackCluster()
    config = cluster_yaml()
    try:
        cluster.start_head(
            int(config["available_node_types"][config["head_node_type"]]["resources"]["CPU"]),
            autoscaling=lambda gcs: loopback_config(
                config, gcs_address=gcs, temp_dir=cluster.temp_dir, idle_timeout_minutes=IDLE_TIMEOUT_MIN
            ),
        )
        yield cluster
    finally:
        cluster.stop()


def test_autoscaler_adds_cpu_then_gpu_workers_for_jobs_and_removes_them_when_idle(
    autoscaling_cluster, tmp_path
):
    cluster = autoscaling_cluster
    watch = NodeWatch(cluster.dashboard_url)
    watch.start()
    dump, index, _ = pack_multistream(DUMP, tmp_path / "s-multistream.xml.bz2", pages_per_stream=1)
    corpus, vectors = tmp_path / "corpus", tmp_path / "vectors"
    try:
        started = time.monotonic()
        build = [
            sys.executable,
            "ray_jobs/build_corpus.py",
            f"--dump={dump}",
            f"--multistream-index={index}",
            f"--out={corpus}",
            "dump.streams_per_shard=1",
        ]
        status, logs = wait_job(cluster.dashboard_url, submit_job(cluster.dashboard_url, build))
        assert status == "SUCCEEDED", logs[-3000:]
        assert watch.types_since(started) == {"head", "cpu_worker"}, watch.samples[-5:]
        assert 1 <= len(watch.nodes_of("cpu_worker")) <= 2, watch.samples  # the type's max_workers here

        embedding = time.monotonic()
        embed = [
            sys.executable,
            "ray_jobs/embed.py",
            f"--corpus={corpus}",
            f"--out={vectors}",
            "embed.workers=1",
            "embed.num_gpus=1",
            "embed.num_cpus=2",  # the GPU worker's CPUs (its GPU being logical)
        ]
        status, logs = wait_job(cluster.dashboard_url, submit_job(cluster.dashboard_url, embed))
        assert status == "SUCCEEDED", logs[-3000:]
        assert "gpu_worker" in watch.types_since(embedding), watch.samples[-5:]
        assert "but no CUDA device is visible there: embedded on the CPU" in logs

        idle = time.monotonic()
        deadline = idle + IDLE_TIMEOUT_MIN * 60 + 60  # the timeout, then a drain and a stop
        while set(watch.now().values()) != {"head"}:
            assert time.monotonic() < deadline, f"workers not removed: {watch.now()}"
            time.sleep(1.0)
    finally:
        watch.done.set()
    print(f"idle workers removed {time.monotonic() - idle:.0f} s after the last job")

    corpus_in_process(dump, index, tmp_path / "in-process", streams_per_shard=1)
    assert_same_parts(corpus, tmp_path / "in-process", SHARDS)
    in_process = tmp_path / "vectors-in-process"
    embed_corpus(corpus, in_process, embedder_spec(load_config("local").embedder), workers=0)
    units = sorted(p.name for p in vectors.glob("units/*.npy"))
    assert units and units == sorted(p.name for p in in_process.glob("units/*.npy"))
    for name in units:
        assert (
            np.load(vectors / "units" / name).tobytes() == np.load(in_process / "units" / name).tobytes()
        ), name
