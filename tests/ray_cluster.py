"""A real Ray cluster of ``ray start`` nodes on loopback addresses (127.0.0.2, .3, ...), for tests that submit
jobs, serve, or lose a node.

Every node is ``ray start --block`` in its own child process with its own ports, so a node is one process tree:
``kill(node)`` SIGKILLs that tree (a lost machine), ``stop()`` every tree still alive, all by PID (never
``ray stop``, which would also stop the test session's own local Ray). The nodes share one temp dir; each
worker node's Serve proxy gets its own port, so the head's is the one at ``http_options.port``.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.processes import REGISTRY

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]
AUTOSCALED = "autoscaled"  # under a cluster's temp dir: a PID file per node its autoscaler started


def ray_env() -> dict[str, str]:
    """The environment for ``ray`` commands and drivers: no token auth, no usage stats, no inherited address,
    cluster mode."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])  # serve/
    env.pop("RAY_ADDRESS", None)
    env.pop(
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None
    )  # set by init_ray's single-machine mode; nodes need clusters
    return env


# a node's block of ports: its worker processes' first, then one per listener; every block lies below the
# kernel's ephemeral range (32768+), so no outgoing connection can take a port between its choice and the
# node's bind (the race of picking a free port and releasing it), and below 30000, where Serve's HAProxy
# ingress puts its replicas' HTTP servers (serve/README.md "Ports")
BLOCK, WORKER_PORTS = 250, 230
LISTENERS = (
    *("node-manager", "object-manager", "agent", "agent-grpc", "runtime-env-agent", "metrics"),
    *("serve-proxy", "gcs", "dashboard", "client-server"),
)
FIRST_BLOCK_PORT, BLOCKS = 20000, 16  # LoopbackCluster's nodes: 20000-23999 (an autoscaler's: 24000+)
_blocks = itertools.count()  # a session never reuses a block (nor its loopback address)


def node_port(low: int, listener: str) -> int:
    """The port of ``listener`` on the node whose block starts at ``low``."""
    return low + WORKER_PORTS + LISTENERS.index(listener)


def node_command(ip: str, temp_dir: str, resources: dict[str, float], low: int, extra=()) -> list:
    """``ray start --block`` of one node on loopback address ``ip`` with the ports of its block from
    ``low``; ``resources`` may hold ``CPU`` and ``GPU`` (logical: a ``GPU`` node here has no device)."""
    custom = {k: v for k, v in resources.items() if k not in ("CPU", "GPU")}
    return [
        str(BIN / "ray"),
        "start",
        "--block",
        f"--node-ip-address={ip}",  # its own loopback address (127.0.0.1 itself Ray swaps for the machine's)
        f"--num-cpus={int(resources.get('CPU', 0))}",
        f"--num-gpus={int(resources.get('GPU', 0))}",
        f"--resources={json.dumps(custom)}",
        f"--temp-dir={temp_dir}",
        f"--node-manager-port={node_port(low, 'node-manager')}",
        f"--object-manager-port={node_port(low, 'object-manager')}",
        f"--min-worker-port={low}",
        f"--max-worker-port={low + WORKER_PORTS - 1}",
        # own agent ports: the defaults (52365, ...) clash between nodes and with other local Rays
        f"--dashboard-agent-listen-port={node_port(low, 'agent')}",
        f"--dashboard-agent-grpc-port={node_port(low, 'agent-grpc')}",
        f"--runtime-env-agent-port={node_port(low, 'runtime-env-agent')}",
        f"--metrics-export-port={node_port(low, 'metrics')}",
        "--object-store-memory=100000000",
        *extra,
    ]


def node_env(head: bool, low: int) -> dict[str, str]:
    """A node's environment: :func:`ray_env`, and a worker's Serve proxy off the head's HTTP port (one
    machine)."""
    env = ray_env()
    if not head:
        env["RAY_SERVE_WORKER_PROXY_HTTP_PORT"] = str(node_port(low, "serve-proxy"))
    return env


def start_log_tail(path: Path, lines: int = 30) -> str:
    """The last lines of a node's ``ray start`` log, for an error that says why it exited."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


@dataclass
class Node:
    """One ``ray start --block`` process; ``resource`` is a custom resource only this node has."""

    name: str
    process: subprocess.Popen
    resource: str
    node_id: str | None = None

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []


@dataclass
class LoopbackCluster:
    """A head (``head_cpus`` CPUs, the dashboard and job agent) plus worker nodes, each on its own loopback
    address and ports, with a custom resource ``node_<name>``."""

    temp_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short paths
    nodes: list[Node] = field(default_factory=list)  # the nodes not killed
    started: int = 0  # nodes started so far (each on the session's next loopback address and port block)
    gcs_address: str = ""
    dashboard_url: str = ""
    # its nodes end with the fixture or test that made it (tests/processes.py), whoever adds them
    owner: object = field(default_factory=REGISTRY.current)

    def _place(self) -> tuple[str, int]:
        """The next node's loopback address and the start of its block of ports."""
        block = next(_blocks)
        if block >= BLOCKS:
            raise RuntimeError(f"a session's loopback clusters have {BLOCKS} node places; all are used")
        return f"127.0.0.{2 + block}", FIRST_BLOCK_PORT + BLOCK * block

    def _start(self, name: str, cpus: int, place: tuple[str, int], extra: list[str], env=None) -> Node:
        (ip, low), resource = place, f"node_{name}"
        self.started += 1
        command = node_command(ip, self.temp_dir, {"CPU": cpus, resource: 1}, low, extra)
        log = open(Path(self.temp_dir) / f"start-{name}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=node_env(head="--head" in extra, low=low) | (env or {}),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        REGISTRY.register(process.pid, f"ray start --block ({name}, {ip})", self.owner)
        node = Node(name, process, resource)
        self.nodes.append(node)
        return node

    def start(self, workers: tuple[str, ...] = ("a", "b"), head_cpus: int = 0, worker_cpus: int = 1):
        """Start the head, then each worker in turn (nodes starting together on one temp dir time out)."""
        self.start_head(head_cpus)
        for name in workers:
            self.add_worker(name, worker_cpus)
        return self

    def start_head(self, cpus: int = 1, autoscaling: Callable[[str], dict] | None = None) -> Node:
        """The head; with ``autoscaling`` (the config for a GCS address) its autoscaler adds and removes
        nodes, checking every second."""
        ip, low = place = self._place()
        dashboard = node_port(low, "dashboard")
        self.gcs_address = f"{ip}:{node_port(low, 'gcs')}"
        self.dashboard_url = f"http://127.0.0.1:{dashboard}"
        extra, env = [], {}
        if autoscaling:
            config = Path(self.temp_dir) / "autoscaling.json"
            config.write_text(json.dumps(autoscaling(self.gcs_address)))
            extra, env = [f"--autoscaling-config={config}"], {"AUTOSCALER_UPDATE_INTERVAL_S": "1"}
        node = self._start(
            "head",
            cpus,
            place,
            [
                "--head",
                f"--port={node_port(low, 'gcs')}",
                "--include-dashboard=true",  # the job agent of `ray job submit`
                "--dashboard-host=127.0.0.1",
                f"--dashboard-port={dashboard}",
                f"--ray-client-server-port={node_port(low, 'client-server')}",
                *extra,
            ],
            env,
        )
        self.wait_nodes()
        return node

    def add_worker(self, name: str, cpus: int = 1) -> Node:
        node = self._start(name, cpus, self._place(), [f"--address={self.gcs_address}"])
        self.wait_nodes()
        return node

    def wait_nodes(self, timeout_s: float = 240.0) -> None:
        """Wait until every started node is alive in the GCS, and record each node's id."""
        deadline = time.monotonic() + timeout_s
        while True:
            for node in self.nodes:
                if node.process.poll() is not None:
                    log = Path(self.temp_dir) / f"start-{node.name}.log"
                    raise RuntimeError(f"ray start of {node.name} exited; {log}:\n{start_log_tail(log)}")
            alive = self._alive_nodes()
            for node in self.nodes:
                node.node_id = alive.get(node.resource)
            if all(node.node_id for node in self.nodes):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"nodes not up after {timeout_s}s: {alive}")
            time.sleep(2)

    def _alive_nodes(self) -> dict[str, str]:
        """``{custom resource: node id}`` of the alive nodes (from a short-lived driver)."""
        code = (
            "import json, ray\n"
            f"ray.init(address={self.gcs_address!r}, log_to_driver=False, logging_level='ERROR')\n"
            "print('NODES', json.dumps({r: n['NodeID'] for n in ray.nodes() if n['Alive'] "
            "for r in n['Resources'] if r.startswith('node_')}))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            check=False,
            env=ray_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            return {}
        # Ray may print warnings of its own after it (a lost node's lagging heartbeats)
        (nodes,) = [
            line.removeprefix("NODES ") for line in done.stdout.splitlines() if line.startswith("NODES ")
        ]
        return json.loads(nodes)

    def kill(self, node: Node) -> None:
        """SIGKILL the node's whole process tree (raylet, its workers, agents): the machine is gone."""
        for proc in node.tree():
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        node.process.wait(30)
        self.nodes.remove(node)

    def workers(self) -> list[Node]:
        return [node for node in self.nodes if node.name != "head"]

    def replace_lost(self, workers: int, cpus: int = 1) -> None:
        """Add workers until ``workers`` are alive (after a test killed some)."""
        while len(self.workers()) < workers:
            self.add_worker(f"w{self.started}", cpus)

    def stop(self) -> None:
        """Kill every node, the autoscaler's and the workers before the head, and remove the temp dir."""
        stop_autoscaled(self.temp_dir)
        for node in reversed(self.nodes):
            self.kill(node)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def stop_tree(pid: int, grace_s: float = 15.0) -> None:
    """SIGTERM the process (``ray start --block`` then stops its node), SIGKILL whatever of its tree is left
    after ``grace_s``."""
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    root.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


def stop_autoscaled(temp_dir: str) -> None:
    """Stop every node the provider started and has not terminated (from its PID files)."""
    for path in sorted((Path(temp_dir) / AUTOSCALED).glob("*.pid")):
        stop_tree(int(path.read_text()), grace_s=5.0)
        path.unlink(missing_ok=True)


def submit_job(dashboard_url: str, entrypoint: list[str], timeout_s: float = 300) -> str:
    """Submit a job (run in the repository, with the nodes' environment); retries while the head's job
    agent is still starting. Returns the job id."""
    from ray.job_submission import JobSubmissionClient

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return JobSubmissionClient(dashboard_url).submit_job(entrypoint=shlex.join(entrypoint))
        except (RuntimeError, ConnectionError) as exc:  # the dashboard or its job agent is not up yet
            if time.monotonic() > deadline:
                raise TimeoutError(f"cannot submit a job to {dashboard_url}: {exc}") from exc
        time.sleep(2)


def assert_job_running(dashboard_url: str, job_id: str) -> None:
    """Fail at once, with the job's logs, if the job has already ended (a wait for its progress is futile)."""
    from ray.job_submission import JobStatus, JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    status = client.get_job_status(job_id)
    assert status in (JobStatus.PENDING, JobStatus.RUNNING), (
        f"job {job_id} {status.value}:\n{client.get_job_logs(job_id)[-3000:]}"
    )


def wait_job(dashboard_url: str, job_id: str, timeout_s: float = 600) -> tuple[str, str]:
    """Wait for the job to end; returns its final status ("SUCCEEDED", "FAILED", "STOPPED") and its logs."""
    from ray.job_submission import JobStatus, JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    deadline = time.monotonic() + timeout_s
    while (status := client.get_job_status(job_id)) not in (
        JobStatus.SUCCEEDED,
        JobStatus.FAILED,
        JobStatus.STOPPED,
    ):
        if time.monotonic() > deadline:
            client.stop_job(job_id)
            raise TimeoutError(
                f"job {job_id} still {status} after {timeout_s}s:\n{client.get_job_logs(job_id)[-3000:]}"
            )
        time.sleep(1)
    return status.value, client.get_job_logs(job_id)
