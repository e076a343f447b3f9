"""``ray job submit`` of the corpus build to a real ``ray start --head`` cluster on 127.0.0.1."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_head():
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    port = _free_port()
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's sockets live there
    start = [
        str(BIN / "ray"),
        "start",
        "--head",
        "--num-cpus=2",
        "--include-dashboard=true",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={port}",
        f"--port={_free_port()}",
        f"--temp-dir={temp_dir}",
        # its own agent ports: the defaults (52365, ...) may be held by the test session's local Ray
        f"--dashboard-agent-listen-port={_free_port()}",
        f"--dashboard-agent-grpc-port={_free_port()}",
        f"--runtime-env-agent-port={_free_port()}",
        f"--metrics-export-port={_free_port()}",
    ]
    subprocess.run(start, env=env, check=True, capture_output=True, timeout=180)
    try:
        yield f"http://127.0.0.1:{port}", env
    finally:
        # not `ray stop`: it would also stop the test session's own local Ray
        subprocess.run(["pkill", "-9", "-f", temp_dir], check=False, capture_output=True, timeout=60)
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_corpus_job_submitted_to_a_ray_cluster(ray_head, tmp_path):
    address, env = ray_head
    out = tmp_path / "corpus"
    entrypoint = f"{sys.executable} ray_jobs/build_corpus.py --out {out}"
    deadline = time.monotonic() + 300
    while True:  # the head's job agent needs a moment after `ray start` (long on a loaded machine)
        result = subprocess.run(
            [str(BIN / "ray"), "job", "submit", f"--address={address}", "--", *entrypoint.split()],
            check=False,
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if "No available agent" not in result.stderr or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "succeeded" in result.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["articles"] == 106
