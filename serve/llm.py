"""The actor LLM: a Ray Serve LLM (vLLM engine) OpenAI-compatible application from ``LLMServeConfig``.

    serve.run(build_app(LLMServeConfig(model="Qwen/Qwen3.5-9B")), name="llm", route_prefix="/llm")
    # serve deploy: import_path serve.llm:app_builder, args = LLMServeConfig fields (configs/serve/cluster.yaml)

The agent then uses ``base_url=http://<head>:11536/llm/v1`` and the served model name. What the reference's
SGLang launch set per model family (CONTRACT §9.1) maps to vLLM engine arguments: Qwen3* get
``tool_call_parser=qwen3_coder`` and ``reasoning_parser=qwen3``; Gemma-4 ``gemma4``/``gemma4``; Mistral
``mistral`` (plus the ``mistral`` reasoning parser for reasoning/Magistral models). Deliberate deviations
from the reference: an over-long prompt is an error (vLLM answers 400), not silently truncated
(``--allow-auto-truncate``); replicas autoscale and Serve routes by load instead of blind round-robin.

vLLM ships GPU builds only and pins its own torch, so it lives in the ``gpu`` extra
(``pip install -e '.[gpu]'`` on the GPU nodes); :func:`llm_config` needs neither vLLM nor a GPU.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sws.agent.family import model_family
from sws.config import LLMServeConfig, merge_section

# family -> (tool-call parser, reasoning parser) of vLLM
FAMILY_PARSERS: dict[str, tuple[str | None, str | None]] = {
    "qwen3": ("qwen3_coder", "qwen3"),
    "gemma4": ("gemma4", "gemma4"),
    "mistral": ("mistral", None),
}
INSTALL_HINT = "Ray Serve LLM needs vLLM (GPU nodes): pip install -e '.[gpu]'"


def load_llm_config(args: LLMServeConfig | dict[str, Any] | None) -> LLMServeConfig:
    """``args`` validated against ``LLMServeConfig``; ``{"profile": "paper", ...}`` starts from that profile's
    ``llm:`` section. Unknown keys and wrong types raise ``ValueError``."""
    return merge_section(LLMServeConfig, args, "llm")


def parsers(model: str) -> tuple[str | None, str | None]:
    """``(tool_call_parser, reasoning_parser)`` for the model's family (``sws.agent.model_family``)."""
    tool, reasoning = FAMILY_PARSERS.get(model_family(model), (None, None))
    if model_family(model) == "mistral" and any(w in model.lower() for w in ("reasoning", "magistral")):
        reasoning = "mistral"
    return tool, reasoning


def served_name(cfg: LLMServeConfig) -> str:
    return cfg.served_model_name or cfg.model.rstrip("/").split("/")[-1]


def llm_config(cfg: LLMServeConfig | dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of ``ray.serve.llm.LLMConfig`` (plain data: no vLLM needed to build or inspect it).

    Raises:
        ValueError: inconsistent settings.
    """
    cfg = load_llm_config(cfg)
    if cfg.tensor_parallel_size < 1 or cfg.pipeline_parallel_size < 1:
        raise ValueError("tensor_parallel_size and pipeline_parallel_size must be >= 1")
    if not 0 < cfg.gpu_memory_utilization <= 1:
        raise ValueError(f"gpu_memory_utilization={cfg.gpu_memory_utilization}: must be in (0, 1]")
    replicas = cfg.replicas
    if replicas.min_replicas > replicas.max_replicas or replicas.max_replicas < 1:
        raise ValueError(f"replicas: min {replicas.min_replicas} > max {replicas.max_replicas} or max < 1")
    tool, reasoning = parsers(cfg.model)
    tool, reasoning = cfg.tool_call_parser or tool, cfg.reasoning_parser or reasoning
    engine: dict[str, Any] = {
        "tensor_parallel_size": cfg.tensor_parallel_size,
        "pipeline_parallel_size": cfg.pipeline_parallel_size,
        "max_model_len": cfg.max_model_len,
        "dtype": cfg.dtype,
        "gpu_memory_utilization": cfg.gpu_memory_utilization,
        "max_num_seqs": cfg.max_num_seqs,
    }
    if tool:
        engine |= {"enable_auto_tool_choice": True, "tool_call_parser": tool}
    if reasoning:
        engine["reasoning_parser"] = reasoning
    engine |= dict(cfg.engine_kwargs)
    deployment: dict[str, Any] = {"max_ongoing_requests": cfg.max_ongoing_requests}
    if replicas.min_replicas == replicas.max_replicas:
        deployment["num_replicas"] = replicas.max_replicas
    else:
        deployment["autoscaling_config"] = asdict(replicas)
    out: dict[str, Any] = {
        "model_loading_config": {"model_id": served_name(cfg), "model_source": cfg.model},
        "engine_kwargs": engine,
        "deployment_config": deployment,
    }
    if cfg.accelerator_type:
        out["accelerator_type"] = cfg.accelerator_type
    return out


def build_app(cfg: LLMServeConfig | dict[str, Any]) -> Any:
    """The OpenAI-compatible application (``/v1/chat/completions``, ``/v1/models``, ...).

    Raises:
        ImportError: Ray Serve LLM's engine (vLLM) is not installed, with the install line.
    """
    config = llm_config(cfg)
    try:
        from ray.serve.llm import LLMConfig, build_openai_app
    except ImportError as exc:
        raise ImportError(f"{INSTALL_HINT} ({exc})") from exc
    return build_openai_app({"llm_configs": [LLMConfig(**config)]})


def app_builder(args: dict[str, Any]) -> Any:
    """``serve deploy`` entry: ``import_path: serve.llm:app_builder`` with ``LLMServeConfig`` fields as args."""
    return build_app(load_llm_config(args))
