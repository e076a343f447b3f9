"""``ray job submit`` of the corpus build to a real ``ray start --head`` cluster on loopback."""

import json
import sys
import time

import pytest

from tests.ray_cluster import LoopbackCluster, submit_job, wait_job


@pytest.fixture(scope="module")  # one node place of the session's (tests/ray_cluster.py) for both
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


def test_a_stopped_corpus_job_ends_with_its_one_line(ray_head, tmp_path):
    """``ray job stop`` (SIGTERM, SIGKILL 3 s later) once the build runs: the job's one line (sws/stopping.py)."""
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(ray_head.dashboard_url)
    job = submit_job(
        ray_head.dashboard_url, [sys.executable, "ray_jobs/build_corpus.py", f"--out={tmp_path}"]
    )
    deadline = time.monotonic() + 300  # a hang guard: the build starts in seconds
    while "Starting execution of Dataset" not in client.get_job_logs(job):
        assert client.get_job_status(job).value in ("PENDING", "RUNNING") and time.monotonic() < deadline
        time.sleep(0.2)
    client.stop_job(job)
    status, logs = wait_job(ray_head.dashboard_url, job)
    assert status == "STOPPED", logs[-3000:]
    assert logs.strip().splitlines()[-1] == (
        "interrupted by SIGTERM: what was finished is kept; submit the same job again to resume"
    )
