"""A Ray autoscaler node provider whose machines are ``ray start --block`` processes on loopback addresses of
this machine (``tests.ray_cluster.node_command``), and the autoscaling config that uses it, generated from
``configs/cluster.yaml``'s node types.

Ray's own fake multi-node provider starts its nodes on the machine's network address, and its
``AutoscalingCluster`` runs ``ray stop --force`` (every Ray of the user on the machine); this one keeps each
node on its own 127.0.0.N with its own ports, and records each node's PID in ``<temp_dir>/autoscaled`` so
that the test stops what the autoscaler left by PID.

It runs inside the head's autoscaler (the ``monitor`` process), imported as
``tests.cluster.loopback_provider.LoopbackNodeProvider`` (the nodes' ``PYTHONPATH`` has the repository).
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import yaml
from ray.autoscaler.node_provider import NodeProvider
from ray.autoscaler.tags import (
    NODE_KIND_HEAD,
    NODE_KIND_WORKER,
    STATUS_UP_TO_DATE,
    TAG_RAY_NODE_KIND,
    TAG_RAY_NODE_NAME,
    TAG_RAY_NODE_STATUS,
    TAG_RAY_USER_NODE_TYPE,
)

from tests.ray_cluster import AUTOSCALED, BLOCK, REPO, node_command, node_env, stop_tree

HEAD_ID = "head"
NODE_TYPE_LABEL = "sws-node-type"  # each node's type, as a Ray node label (the state API lists it)
# autoscaled node n: 127.0.0.(20 + n), its port block from 24000 + BLOCK n, below 30000 (Serve's, as above)
FIRST_IP, FIRST_PORT, LAST_PORT = 20, 24000, 30000


def loopback_config(
    cluster: dict[str, Any],
    *,
    gcs_address: str,
    temp_dir: str,
    cpus_per_node: int = 2,
    max_workers_per_type: int = 2,
    idle_timeout_minutes: float = 0.25,
) -> dict[str, Any]:
    """The autoscaling config of ``cluster`` (``configs/cluster.yaml`` as loaded) for this machine: the same
    node types, head and GPU counts; each worker type from 0 nodes (every node is added for demand), at most
    ``max_workers_per_type`` nodes of at most ``cpus_per_node`` CPUs (a 2-core machine hosts them all), and a
    short idle timeout."""
    head = cluster["head_node_type"]
    types = {}
    for name, spec in cluster["available_node_types"].items():
        resources = dict(spec["resources"])
        if name != head:
            resources["CPU"] = min(resources["CPU"], cpus_per_node)
        types[name] = {
            "resources": resources,
            "labels": {NODE_TYPE_LABEL: name},
            "node_config": {},
            "min_workers": 0,
            "max_workers": 0 if name == head else min(spec["max_workers"], max_workers_per_type),
        }
    return {
        "cluster_name": cluster["cluster_name"],
        "max_workers": sum(t["max_workers"] for t in types.values()),
        "upscaling_speed": cluster["upscaling_speed"],
        "idle_timeout_minutes": idle_timeout_minutes,
        "provider": {
            "type": "external",
            "module": f"{__name__}.LoopbackNodeProvider",
            "gcs_address": gcs_address,
            "head_ip": gcs_address.split(":")[0],
            "head_node_type": head,
            "temp_dir": temp_dir,
            "disable_node_updaters": True,  # nothing to set up over SSH: the nodes are this machine
            "disable_launch_config_check": True,
        },
        "auth": {},
        "available_node_types": types,
        "head_node_type": head,
        "file_mounts": {},
        "cluster_synced_files": [],
        "file_mounts_sync_continuously": False,
        "rsync_exclude": [],
        "rsync_filter": [],
        "initialization_commands": [],
        "setup_commands": [],
        "head_setup_commands": [],
        "worker_setup_commands": [],
        "head_start_ray_commands": [],
        "worker_start_ray_commands": [],
    }


def cluster_yaml() -> dict[str, Any]:
    return yaml.safe_load((REPO / "configs" / "cluster.yaml").read_text())


class LoopbackNodeProvider(NodeProvider):
    """Nodes are ``ray start --block`` child processes joining ``gcs_address``; terminating one stops its
    process tree (SIGTERM, then SIGKILL what is left)."""

    def __init__(self, provider_config: dict[str, Any], cluster_name: str) -> None:
        super().__init__(provider_config, cluster_name)
        self.lock = threading.RLock()
        self.temp_dir = provider_config["temp_dir"]
        self.pid_dir = Path(self.temp_dir) / AUTOSCALED
        self.pid_dir.mkdir(exist_ok=True)
        self.nodes: dict[str, dict[str, Any]] = {
            HEAD_ID: {
                "ip": provider_config["head_ip"],
                "process": None,
                "tags": {
                    TAG_RAY_NODE_KIND: NODE_KIND_HEAD,
                    TAG_RAY_USER_NODE_TYPE: provider_config["head_node_type"],
                    TAG_RAY_NODE_NAME: HEAD_ID,
                    TAG_RAY_NODE_STATUS: STATUS_UP_TO_DATE,
                },
            }
        }
        self.launched = 0

    def non_terminated_nodes(self, tag_filters: dict[str, str]) -> list[str]:
        with self.lock:
            return [
                node_id
                for node_id, node in self.nodes.items()
                if all(node["tags"].get(k) == v for k, v in tag_filters.items())
            ]

    def is_running(self, node_id: str) -> bool:
        with self.lock:
            return node_id in self.nodes

    def is_terminated(self, node_id: str) -> bool:
        return not self.is_running(node_id)

    def node_tags(self, node_id: str) -> dict[str, str]:
        with self.lock:
            return self.nodes[node_id]["tags"]

    def set_node_tags(self, node_id: str, tags: dict[str, str]) -> None:
        with self.lock:
            self.nodes[node_id]["tags"].update(tags)

    def internal_ip(self, node_id: str) -> str:
        with self.lock:
            return self.nodes[node_id]["ip"]

    def external_ip(self, node_id: str) -> str:
        return self.internal_ip(node_id)

    def create_node_with_resources_and_labels(
        self,
        node_config: dict[str, Any],
        tags: dict[str, str],
        count: int,
        resources: dict[str, float],
        labels: dict[str, str],
    ) -> None:
        for _ in range(count):
            self._launch(tags, resources, labels)

    def _launch(self, tags: dict[str, str], resources: dict[str, float], labels: dict[str, str]) -> None:
        with self.lock:
            n, self.launched = self.launched, self.launched + 1
            node_id = f"node-{n}"
            extra = [f"--address={self.provider_config['gcs_address']}", f"--labels={json.dumps(labels)}"]
            low = FIRST_PORT + BLOCK * n
            if low + BLOCK > LAST_PORT:
                raise RuntimeError(f"the loopback provider has no port block for a node {n + 1}")
            command = node_command(f"127.0.0.{FIRST_IP + n}", self.temp_dir, resources, low, extra)
            log = open(Path(self.temp_dir) / f"start-{node_id}.log", "wb")  # noqa: SIM115
            process = subprocess.Popen(
                command, cwd=REPO, env=node_env(head=False, low=low), stdout=log, stderr=subprocess.STDOUT
            )
            (self.pid_dir / f"{node_id}.pid").write_text(str(process.pid))
            self.nodes[node_id] = {
                "ip": f"127.0.0.{FIRST_IP + n}",
                "process": process,
                "tags": {
                    TAG_RAY_NODE_KIND: NODE_KIND_WORKER,
                    TAG_RAY_NODE_NAME: node_id,
                    TAG_RAY_NODE_STATUS: STATUS_UP_TO_DATE,
                    **tags,
                },
            }

    def terminate_node(self, node_id: str) -> None:
        with self.lock:
            node = self.nodes.pop(node_id)
        stop_tree(node["process"].pid)
        (self.pid_dir / f"{node_id}.pid").unlink(missing_ok=True)

    @staticmethod
    def bootstrap_config(cluster_config: dict[str, Any]) -> dict[str, Any]:
        return cluster_config
