"""``serve.status()`` of a running cluster as plain data, read by a driver process so that the caller (a test, a
benchmark) needs no Ray connection of its own: once (:func:`serve_status`), or every fraction of a second by
one long-lived driver (:class:`StatusWatch`; a driver's start costs seconds).

    python -m serve.status RAY_ADDRESS             # one JSON line: {app: {"status", "deployments": {...}}}
    python -m serve.status RAY_ADDRESS --every 0.5 # a line every 0.5 s until its parent exits
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, Self


def serve_status(ray_address: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """``{app: {"status", "deployments": {name: {"status", "replicas": {state: count}}}}}`` of the Serve
    instance on the cluster at ``ray_address``.

    Raises:
        RuntimeError: the driver failed (its stderr's tail).
        subprocess.TimeoutExpired: no answer within ``timeout_s``.
    """
    done = subprocess.run(
        [sys.executable, "-m", "serve.status", ray_address],
        capture_output=True,
        check=False,
        text=True,
        timeout=timeout_s,
        env=_driver_env(),
    )
    if done.returncode != 0:
        raise RuntimeError(f"serve.status() failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class StatusWatch:
    """Serve's status every ``interval_s``, from one driver process for the life of the ``with`` block:
    ``samples`` holds ``(time.monotonic(), status)`` pairs as they come.

    Raises (from :meth:`wait`): RuntimeError once the driver has exited (its stderr's tail)."""

    def __init__(self, ray_address: str, interval_s: float = 0.5) -> None:
        self.ray_address, self.interval_s = ray_address, interval_s
        self.samples: list[tuple[float, dict[str, Any]]] = []
        self.process: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self._new = threading.Condition()

    def __enter__(self) -> Self:
        command = [sys.executable, "-m", "serve.status", self.ray_address, "--every", str(self.interval_s)]
        self._stderr = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self._stderr, text=True, env=_driver_env()
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(10)
        self._stderr.close()

    def _read(self) -> None:
        for line in self.process.stdout:
            with self._new:
                self.samples.append((time.monotonic(), json.loads(line)))
                self._new.notify_all()
        with self._new:
            self._new.notify_all()

    def _alive(self) -> None:
        if self.process.poll() is not None and not self._reader.is_alive():
            self._stderr.seek(0)
            raise RuntimeError(f"the serve.status watch exited: {self._stderr.read()[-2000:]}")

    def wait(self, test: Callable[[dict[str, int]], bool], deployment: str, timeout_s: float, app="sws"):
        """Block until a sample taken after this call has replica states of ``deployment`` that pass
        ``test``; returns them.

        Raises:
            TimeoutError: none did within ``timeout_s`` (with the last states).
        """
        deadline = time.monotonic() + timeout_s
        with self._new:
            seen = len(self.samples)
            while True:
                for _, status in self.samples[seen:]:
                    if (states := deployment_replicas(status, deployment, app)) is not None and test(states):
                        return states
                seen = len(self.samples)
                self._alive()
                if not self._new.wait(max(0.0, deadline - time.monotonic())):
                    last = deployment_replicas(self.samples[-1][1], deployment, app) if self.samples else None
                    raise TimeoutError(f"{deployment} replicas after {timeout_s}s: {last}")


def deployment_replicas(status: dict[str, Any], deployment: str, app: str = "sws") -> dict[str, int] | None:
    """``{replica state: count}`` of one deployment in a status (None where it has no such deployment)."""
    return status.get(app, {}).get("deployments", {}).get(deployment, {}).get("replicas")


def _driver_env() -> dict[str, str]:
    env = {**os.environ, "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")}
    env.pop("RAY_ADDRESS", None)
    return env


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


def _watch(interval_s: float) -> None:
    """Print the status every ``interval_s`` until the parent process is gone."""
    parent = os.getppid()
    while os.getppid() == parent:
        try:
            print(json.dumps(_status()), flush=True)
        except Exception as exc:  # noqa: BLE001 (a read the busy controller failed: this sample is skipped)
            print(f"serve.status() failed: {exc!r}", file=sys.stderr, flush=True)
        time.sleep(interval_s)


if __name__ == "__main__":
    import argparse

    from sws.raykit import init_ray

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ray_address")
    parser.add_argument("--every", type=float, help="seconds between lines (default: one line, then exit)")
    args = parser.parse_args()
    init_ray(args.ray_address)
    if args.every is None:
        print(json.dumps(_status()))
    else:
        _watch(args.every)
