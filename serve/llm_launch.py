"""The actor LLM beside the retrieval service under ``sws serve --llm PROFILE_OR_YAML``: one Serve instance,
one listener, the LLM app at ``llm.route_prefix`` (``/llm``: OpenAI base URL ``<service>/llm/v1``).

The LLM app takes the retrieval service's ``host``, ``allowed_hosts``, ``allowed_origins`` and ``token_env``
(so one rule answers every route of the listener), and Ray CPUs of its own: its engine workers' bundles
(``num_cpus`` each) and one for the OpenAI ingress replica. A local Ray is started with at least what both
apps need to start (Ray's CPUs are reservations: on a 2-core machine both still run), and a Ray short of it
is refused before anything is deployed, instead of leaving a replica pending forever.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

from sws.config import LLMServeConfig, ServeConfig

INGRESS_CPUS = 1.0  # Ray Serve LLM's OpenAI ingress replica (its default actor CPU)
READY_TIMEOUT_S = 900.0  # engine start-up: ~40 s quiet, minutes on a loaded 2-core machine


def beside_retrieval(llm: LLMServeConfig, serve_cfg: ServeConfig) -> LLMServeConfig:
    """``llm`` with the retrieval service's listener rules.

    Raises:
        ValueError: its route prefix would shadow or be the retrieval app's.
    """
    prefix = llm.route_prefix.rstrip("/")
    if not prefix.startswith("/") or prefix == serve_cfg.route_prefix.rstrip("/"):
        raise ValueError(
            f"llm.route_prefix={llm.route_prefix!r}: must be a path of its own beside the retrieval app's "
            f"{serve_cfg.route_prefix!r} (default /llm)"
        )
    return replace(
        llm,
        route_prefix=prefix,
        host=serve_cfg.host,
        allowed_hosts=list(serve_cfg.allowed_hosts),
        allowed_origins=list(serve_cfg.allowed_origins),
        token_env=serve_cfg.token_env,
    )


def with_fetched_model(llm: LLMServeConfig) -> LLMServeConfig:
    """``llm`` serving the folder of ``sws fetch model NAME`` where its ``model`` is such a name (``smollm2``)
    and no path: converted on first use, verified after (``sws.fetch.fetch_model``); any other model as is.

    Raises:
        FetchError: the package that carries the weights is missing (with its pip line), or a bad folder.
    """
    from sws.fetch import MODELS, fetch_model

    if llm.model not in MODELS or Path(llm.model).exists():
        return llm
    return replace(llm, model=fetch_model(llm.model)["out"])


def start_cpus(serve_cfg: ServeConfig, llm: LLMServeConfig | None) -> float:
    """Ray CPUs the apps reserve when they start (their minimum replicas)."""
    retrieval = max(1, serve_cfg.replicas.min_replicas) * serve_cfg.num_cpus
    if serve_cfg.embedding.batching:
        retrieval += max(1, serve_cfg.embedding.replicas.min_replicas) * serve_cfg.embedding.num_cpus
    if llm is None:
        return retrieval
    engines = max(1, llm.replicas.min_replicas) * llm.tensor_parallel_size * llm.pipeline_parallel_size
    return retrieval + INGRESS_CPUS + (engines * llm.num_cpus if llm.device == "cpu" else 0.0)


def local_ray_cpus(serve_cfg: ServeConfig, llm: LLMServeConfig | None, asked: int | None) -> int | None:
    """The CPUs to start a local Ray with: ``asked``, else (with the LLM) this machine's or what the apps
    reserve at start, whichever is more; None leaves it to Ray (this machine's)."""
    if asked is not None or llm is None:
        return asked
    return max(os.cpu_count() or 1, math.ceil(start_cpus(serve_cfg, llm)))


def check_resources(serve_cfg: ServeConfig, llm: LLMServeConfig | None) -> None:
    """Refuse a local Ray the apps cannot start on (run after ``ray.init``).

    Raises:
        ValueError: too few CPUs (with the ``--num-cpus`` that fits), or ``device: gpu`` on a Ray without one.
    """
    import ray

    have = ray.cluster_resources()
    need = start_cpus(serve_cfg, llm)
    if have.get("CPU", 0.0) < need:
        raise ValueError(
            f"the apps reserve {need:g} Ray CPUs at start (retrieval {start_cpus(serve_cfg, None):g}"
            f"{'' if llm is None else ', the LLM the rest'}), this Ray has {have.get('CPU', 0.0):g}: "
            f"pass --num-cpus {math.ceil(need)} (Ray's CPUs are reservations, not cores)"
        )
    if llm is not None and llm.device == "gpu" and not have.get("GPU"):
        raise ValueError("llm.device=gpu, and this Ray has no GPU: use llm.device=cpu (the llm-cpu extra)")


def wait_listed(
    url: str,
    model: str,
    token: str | None = None,
    timeout_s: float = READY_TIMEOUT_S,
    stop: threading.Event | None = None,
) -> None:
    """Poll ``GET {url}/models`` (with the bearer token) until it lists ``model`` (or ``stop`` is set).

    Raises:
        TimeoutError: not listed in time.
    """
    headers = {"authorization": f"Bearer {token}"} if token else {}
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        if stop is not None and stop.is_set():
            return
        try:
            request = urllib.request.Request(f"{url}/models", headers=headers)
            with urllib.request.urlopen(request, timeout=5) as response:
                if model in [m["id"] for m in json.load(response)["data"]]:
                    return
                last = f"{model} not listed"
        except (OSError, ValueError, KeyError) as exc:
            last = exc
        time.sleep(1.0)
    raise TimeoutError(f"{url}/models did not list {model} within {timeout_s:g} s (last: {last})")
