"""``sws serve`` from an installed wheel, outside the checkout: the wheel holds the ``serve`` package, and the
CLI, the Serve replicas and other Ray workers import both packages from the install, not the repository."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from serve.launch import free_port
from tests import processes
from tests.serve.conftest import REPO

pytestmark = [pytest.mark.ray, pytest.mark.slow]

WORKER_PATHS = """
import json, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")

@ray.remote(num_cpus=0)  # the replicas hold the CPUs
def paths():
    import serve.retrieval, sws
    return [serve.retrieval.__file__, sws.__file__]

print(json.dumps(ray.get(paths.remote())))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from a copy of the sources, installed with ``pip install --target``."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("sws", "serve"):
        shutil.copytree(REPO / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", root / "dist", source]
    subprocess.run(build, check=True, capture_output=True, cwd=root)
    (wheel,) = (root / "dist").glob("sws-*.whl")
    target = root / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", target, wheel], check=True, cwd=root
    )
    assert (target / "serve" / "retrieval" / "app.py").is_file()
    assert (target / "serve" / "haproxy_exec.py").is_file()
    return target


def _environment(target: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(target), "RAY_AUTH_MODE": "disabled"}
    for name in ("RAY_ADDRESS", "SWS_SERVE_TOKEN"):
        env.pop(name, None)
    return env


def test_sws_serve_runs_from_an_installed_wheel(installed, serve_index, local_tools, tmp_path):
    env, outside = _environment(installed), tmp_path  # no checkout on the path, none in the cwd
    where = subprocess.run(
        [sys.executable, "-c", "import serve, sws; print(serve.__file__); print(sws.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=outside,
        env=env,
    ).stdout.split()
    assert [Path(p).is_relative_to(installed) for p in where] == [True, True], where

    port = free_port()
    command = [sys.executable, "-m", "sws", "serve", "--index", str(serve_index), "--port", str(port)]
    command += ["--num-cpus", "2"]
    log = (tmp_path / "serve.log").open("wb")
    server = processes.popen(command, cwd=outside, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True).start()
        ready = None
        while ready is None:
            line = lines.get(timeout=300)
            if line.startswith('{"event": "ready"'):
                ready = json.loads(line)
        url = ready["url"]
        assert httpx.get(f"{url}/health", timeout=30).status_code == 200
        arguments = {"query": "history of Sudan", "top_k": 2}
        found = httpx.post(f"{url}/search", json=arguments, timeout=60)
        assert found.json()["content"] == local_tools.call_tool("search", json.dumps(arguments))

        worker = subprocess.run(
            [sys.executable, "-c", WORKER_PATHS, ready["ray_address"]],
            check=False,
            capture_output=True,
            text=True,
            timeout=180,
            cwd=outside,
            env=env,
        )
        assert worker.returncode == 0, worker.stderr[-3000:]
        paths = json.loads(worker.stdout.strip().splitlines()[-1])
        assert [Path(p).is_relative_to(installed) for p in paths] == [True, True], paths
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
            raise
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()[-3000:]
