"""The deployments of an unstarted ``serve.Application``, read from its bound graph (nothing runs)."""

from __future__ import annotations

from typing import Any


def deployments_of(app: Any) -> dict[str, Any]:
    """``{name: Deployment}`` of ``app`` and every application bound into its arguments."""
    found: dict[str, Any] = {}
    stack = [app]
    while stack:
        node = stack.pop()
        if hasattr(node, "_bound_deployment"):
            deployment = node._bound_deployment
            found[deployment.name] = deployment
            stack.extend([*deployment.init_args, *deployment.init_kwargs.values()])
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    return found


def autoscaling_of(deployment: Any) -> dict[str, Any] | None:
    """The replica settings sws sets: the autoscaling ones, or ``{"num_replicas": n}`` for a fixed count."""
    config = deployment._deployment_config.autoscaling_config
    if config is None:
        return {"num_replicas": deployment.num_replicas}
    fields = (
        "min_replicas",
        "max_replicas",
        "target_ongoing_requests",
        "upscale_delay_s",
        "downscale_delay_s",
    )
    return {name: getattr(config, name) for name in fields}
