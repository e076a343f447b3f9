"""The actor LLM's Ray Serve LLM deployments with sws's rules for listeners and requests.

- :class:`NodeIPLLMServer` (the engine's replica) and :class:`GuardedOpenAiIngress` (the OpenAI HTTP
  ingress) put their replica's gRPC server on the node IP (``serve/grpc_binding.py``): Ray Serve 2.60 binds
  it on every interface.
- :class:`GuardedOpenAiIngress` answers HTTP behind the retrieval service's ``RequestGuard``: a foreign
  ``Host`` or cross-site ``Origin`` gets 403 (DNS rebinding: Ray Serve LLM's own app allows every origin,
  credentials included), a missing or wrong bearer token 401, a body over ``max_body_bytes`` 413. OpenAI
  clients send no ``Origin``, a loopback or configured ``Host`` and their ``api_key`` as the bearer token,
  so they pass unchanged. The token is read from the environment in the replica, never shipped in the app.

- :class:`LocalModelCallback` skips Ray Serve LLM's node initialisation where it has nothing to fetch.

``serve.llm.build_app`` wires them in (``LLMConfig.server_cls``, ``ingress_cls_config``, ``callback_config``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import ray
from ray.llm._internal.common.callbacks.base import CallbackBase
from ray.llm._internal.common.utils.cloud_utils import is_remote_path
from ray.serve.llm.deployment import LLMServer
from ray.serve.llm.ingress import OpenAiIngress

from serve.grpc_binding import bind_replica_grpc_to_node_ip


class LocalModelCallback(CallbackBase):
    """Ray Serve LLM runs a task on each of the engine's nodes before the engine starts, to fetch the model from
    a cloud mirror; for a model without one (a local folder, or a Hub id that vLLM fetches itself) the task
    only makes torch's ``kernels`` folder and returns the id. Where every engine bundle is on the replica's own
    node, this does that here instead and skips the task: a fresh worker process that imports torch and
    transformers (~10 s of a 2-core machine's start-up)."""

    async def on_before_node_init(self) -> None:
        engine = self.llm_config.get_engine_config()
        if engine.mirror_config is not None or is_remote_path(engine.actual_hf_model_id):
            return
        nodes = set(ray.util.placement_group_table(self.ctx.placement_group)["bundles_to_node_id"].values())
        if nodes != {ray.get_runtime_context().get_node_id()}:
            return
        import torch

        (Path(torch.hub.get_dir()).parent / "kernels").mkdir(parents=True, exist_ok=True)
        self.ctx.run_init_node = False


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
