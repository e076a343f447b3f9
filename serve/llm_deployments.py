"""The actor LLM's Ray Serve LLM deployments with sws's rules for listeners and requests.

- :class:`NodeIPLLMServer` (the engine's replica) and :class:`GuardedOpenAiIngress` (the OpenAI HTTP
  ingress) put their replica's gRPC server on the node IP (``serve/grpc_binding.py``): Ray Serve 2.60 binds
  it on every interface.
- :class:`GuardedOpenAiIngress` answers HTTP behind the retrieval service's ``RequestGuard``: a foreign
  ``Host`` or cross-site ``Origin`` gets 403 (DNS rebinding: Ray Serve LLM's own app allows every origin,
  credentials included), a missing or wrong bearer token 401, a body over ``max_body_bytes`` 413. OpenAI
  clients send no ``Origin``, a loopback or configured ``Host`` and their ``api_key`` as the bearer token,
  so they pass unchanged. The token is read from the environment in the replica, never shipped in the app.

``serve.llm.build_app`` wires them in (``LLMConfig.server_cls``, ``ingress_cls_config``).
"""

from __future__ import annotations

import os
from typing import Any

from ray.serve.llm.deployment import LLMServer
from ray.serve.llm.ingress import OpenAiIngress

from serve.grpc_binding import bind_replica_grpc_to_node_ip


class NodeIPLLMServer(LLMServer):
    """Ray Serve LLM's ``LLMServer`` (the vLLM engine) with its replica's gRPC server on the node IP."""

    async def __init__(self, *args: Any, **kwargs: Any):
        bind_replica_grpc_to_node_ip()
        await super().__init__(*args, **kwargs)


class GuardedOpenAiIngress(OpenAiIngress):
    """Ray Serve LLM's OpenAI ingress with its replica's gRPC server on the node IP and its HTTP app behind
    ``RequestGuard``.

    Args:
        llm_deployments, model_cards, lora_paths: as ``OpenAiIngress``.
        guard: ``host``, ``allowed_hosts``, ``allowed_origins``, ``token_env`` and ``max_body_bytes`` of
            ``LLMServeConfig``.
    """

    def __init__(self, llm_deployments: Any, model_cards: Any, *, guard: dict[str, Any], **kwargs: Any):
        bind_replica_grpc_to_node_ip()
        self._guard = guard
        super().__init__(llm_deployments, model_cards, **kwargs)

    def _set_asgi_app(self, app: Any) -> None:
        """Serve's replica wrapper hands the ingress its ASGI app here (after the constructor)."""
        from serve.retrieval.http_app import RequestGuard
        from sws.host_guard import HostPolicy

        guard = self._guard
        hosts = HostPolicy(
            guard["host"],
            tuple(guard["allowed_hosts"]),
            tuple(guard["allowed_origins"]),
            hosts_option="llm.allowed_hosts (sws serve: serve.allowed_hosts)",
            origins_option="llm.allowed_origins (sws serve: serve.allowed_origins)",
        )
        token = os.environ.get(guard["token_env"]) if guard["token_env"] else None
        guarded = RequestGuard(
            app, token=token, max_body_bytes=guard["max_body_bytes"], hosts=hosts, open_paths=frozenset()
        )
        super()._set_asgi_app(guarded)  # type: ignore[misc]  # ASGIAppReplicaWrapper's, next in the MRO
