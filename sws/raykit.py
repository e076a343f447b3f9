"""Starting or joining Ray the same way everywhere (local default, cluster address, job submission)."""

from __future__ import annotations

import os


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join ``address`` ("auto" or ray://…), or start a lean local Ray; a no-op when Ray is already up.

    Token auth is disabled for local runs unless ``RAY_AUTH_MODE`` says otherwise, so the driver and the
    local cluster agree.
    """
    import ray

    if ray.is_initialized():
        return
    if address in (None, "auto") and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]  # inside `ray job submit`: the job's own cluster
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False


def current_node_id() -> str | None:
    """The id of the Ray node this code runs on, or None outside Ray."""
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
