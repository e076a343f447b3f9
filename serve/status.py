"""``serve.status()`` of a running cluster as plain data, read by a short-lived driver process so that the caller
(a test, a benchmark) needs no Ray connection of its own.

    python -m serve.status RAY_ADDRESS     # one JSON line: {app: {"status", "deployments": {...}}}
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


def serve_status(ray_address: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """``{app: {"status", "deployments": {name: {"status", "replicas": {state: count}}}}}`` of the Serve
    instance on the cluster at ``ray_address``.

    Raises:
        RuntimeError: the driver failed (its stderr's tail).
        subprocess.TimeoutExpired: no answer within ``timeout_s``.
    """
    env = {**os.environ, "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-m", "serve.status", ray_address],
        capture_output=True,
        check=False,
        text=True,
        timeout=timeout_s,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"serve.status() failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def replica_states(ray_address: str, deployment: str, app: str = "sws") -> dict[str, int]:
    """``{replica state: count}`` of one deployment (see :func:`serve_status`)."""
    return serve_status(ray_address)[app]["deployments"][deployment]["replicas"]


def _plain(value: Any) -> str:
    return str(getattr(value, "value", value))  # an enum's value, else the string itself


def _status() -> dict[str, Any]:
    from ray import serve

    return {
        name: {
            "status": _plain(app.status),
            "deployments": {
                deployment: {
                    "status": _plain(state.status),
                    "replicas": {_plain(replica): n for replica, n in state.replica_states.items()},
                }
                for deployment, state in app.deployments.items()
            },
        }
        for name, app in serve.status().applications.items()
    }


if __name__ == "__main__":
    from sws.raykit import init_ray

    init_ray(sys.argv[1])
    print(json.dumps(_status()))
