"""A head and two worker nodes (one CPU each) on loopback, shared by this package's node-loss tests: a worker
an earlier test killed is replaced before the next one; every process is stopped by PID at the end."""

import pytest

from tests.ray_cluster import LoopbackCluster

WORKERS = 2


@pytest.fixture(scope="package")
def _loopback_cluster():
    cluster = LoopbackCluster()
    try:
        yield cluster.start(workers=("a", "b"), head_cpus=0, worker_cpus=1)
    finally:
        cluster.stop()


@pytest.fixture
def cluster(_loopback_cluster):
    """The package's cluster with two alive workers (``cluster.workers()``)."""
    _loopback_cluster.replace_lost(WORKERS)
    return _loopback_cluster
