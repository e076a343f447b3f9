"""``ray job submit`` of the corpus build to a real ``ray start --head`` cluster on loopback."""

import json
import sys

import pytest

from tests.ray_cluster import LoopbackCluster, submit_job, wait_job


@pytest.fixture
def ray_head():
    cluster = LoopbackCluster()
    try:
        yield cluster.start(workers=(), head_cpus=2)
    finally:
        cluster.stop()


def test_corpus_job_submitted_to_a_ray_cluster(ray_head, tmp_path):
    out = tmp_path / "corpus"
    job = submit_job(ray_head.dashboard_url, [sys.executable, "ray_jobs/build_corpus.py", f"--out={out}"])
    status, logs = wait_job(ray_head.dashboard_url, job)
    assert status == "SUCCEEDED", logs[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["articles"] == 106
