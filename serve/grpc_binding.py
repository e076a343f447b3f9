"""Replica listeners on the node IP, not on every interface.

Ray Serve 2.60 starts each replica's inter-deployment gRPC server on ``[::]:0``, with no setting to change
it; callers reach it at the replica's node IP (``RunningReplicaInfo``), so binding there loses nothing. A
deployment calls ``bind_replica_grpc_to_node_ip()`` in its constructor, which runs before the replica
starts that server.
"""

from __future__ import annotations

from typing import Any

_WILDCARD = "[::]:"


def bind_replica_grpc_to_node_ip() -> None:
    """Make this replica's gRPC server bind to the node IP (idempotent)."""
    import ray
    from ray.serve._private import replica

    add_port = replica.add_port_to_grpc_server
    if getattr(add_port, "binds_node_ip", False):
        return
    host = ray.util.get_node_ip_address()
    host = f"[{host}]" if ":" in host else host

    def add_port_on_node_ip(server: Any, address: str) -> int:
        if address.startswith(_WILDCARD):
            address = f"{host}:{address[len(_WILDCARD) :]}"
        return add_port(server, address)

    add_port_on_node_ip.binds_node_ip = True
    replica.add_port_to_grpc_server = add_port_on_node_ip
