"""Starting or joining Ray the same way everywhere (local default, cluster address, job submission), and
finding the system error under what a Ray task raised."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Iterator


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Join ``address`` ("auto", host:port or ray://…), or start a lean local Ray; a no-op when Ray is already up.

    Token auth is disabled for local runs unless ``RAY_AUTH_MODE`` says otherwise, so the driver and the
    local cluster agree. A local Ray listens on loopback only (``_single_machine``), and a loopback
    address is joined there.
    """
    import ray

    if ray.is_initialized():
        return
    if address in (None, "auto") and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]  # inside `ray job submit`: the job's own cluster
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    with _own_sigterm_kept():
        if address:
            if _is_loopback_only(address):  # Ray would rewrite 127.0.0.1 to the node's IP, not listened on
                _single_machine()
            ray.init(address=address, log_to_driver=False)
        else:
            _single_machine()
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False


@contextlib.contextmanager
def _own_sigterm_kept() -> Iterator[None]:
    """Through ``ray.init``, when the command stops itself on SIGTERM (``sws/stopping.py``): keep its handler
    (Ray's would replace it, from the start of ``ray.init``, with an exit 15 that says nothing) and keep the
    driver's native crash handler off it (a stack dump on every SIGTERM; Ray's own processes keep theirs);
    start the local Ray's processes in a session of their own, so a signal to the command's process
    group reaches the command only, which then stops its Ray (a raylet the signal ended first would
    abort the driver)."""
    from ray._private import ray_constants
    from ray._private import services as ray_services
    from ray._private import utils as ray_utils

    if not callable(signal.getsignal(signal.SIGTERM)):
        yield
        return

    class OwnSession(ray_services.ConsolePopen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs, start_new_session=True)

    patched = {
        (ray_utils, "set_sigterm_handler"): lambda handler: None,
        (ray_services, "ConsolePopen"): OwnSession,
        (ray_constants, "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"): True,  # read when the driver connects
    }
    original = {key: getattr(*key) for key in patched}
    try:
        for (module, name), value in patched.items():
            setattr(module, name, value)
        yield
    finally:
        for (module, name), value in original.items():
            setattr(module, name, value)


def _is_loopback_only(address: str) -> bool:
    """``address`` (``host:port``) is this machine's loopback and nothing listens at its port on the node's IP
    (the address cluster-mode Ray rewrites it to): a local Ray in single-machine mode, which a driver must join
    on loopback (a cluster's Ray listens on every interface and is joined as Ray does by default)."""
    from ray._private.services import node_ip_address_from_perspective

    host, _, port = address.rpartition(":")
    if "://" in address or host.strip("[]") not in ("127.0.0.1", "localhost", "::1") or not port.isdigit():
        return False
    try:
        with socket.create_connection((node_ip_address_from_perspective(), int(port)), timeout=1.0):
            return False
    except OSError:
        return True


def _single_machine() -> None:
    """Ray's single-machine mode for this driver and the local Ray it starts: the node IP is 127.0.0.1, so
    Ray's servers bind there instead of on every interface (Linux defaults to cluster mode) and the driver
    joins there. Ray reads the variable at import, so this process's copy is set too; the Ray processes
    inherit the variable."""
    from ray._private import ray_constants

    if os.environ.setdefault(ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR, "0") == "0":
        ray_constants.ENABLE_RAY_CLUSTER = False


def current_node_id() -> str | None:
    """The id of the Ray node this code runs on, or None outside Ray."""
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None


def os_error_in(exc: BaseException) -> OSError | None:
    """The innermost ``OSError`` that ``exc`` is or was raised from (``raise … from``, and Ray's task errors,
    whose ``cause`` is what the task raised: a full disk in a worker), or None."""
    found, seen = None, set()
    while isinstance(exc, BaseException) and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError):
            found = exc
        exc = getattr(exc, "cause", None) or exc.__cause__
    return found
