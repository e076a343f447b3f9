"""A head and two worker nodes (``node_a``, ``node_b``, one CPU each) on loopback, fresh for each test,
every process stopped by PID at the end."""

import pytest

from tests.ray_cluster import LoopbackCluster


@pytest.fixture
def cluster():
    cluster = LoopbackCluster()
    try:
        yield cluster.start(workers=("a", "b"), head_cpus=0, worker_cpus=1)
    finally:
        cluster.stop()
