"""The actor LLM app's configuration, built and checked without vLLM or a GPU (``serve/llm.py``)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from serve.llm import INSTALL_HINT, build_app, llm_config, load_llm_config, parsers
from sws.config import AutoscalingSettings, LLMServeConfig

HAS_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Qwen/Qwen3.5-9B", ("qwen3_coder", "qwen3")),
        ("Qwen/Qwen3.5-4B", ("qwen3_coder", "qwen3")),
        ("/models/qwen3-32b-instruct", ("qwen3_coder", "qwen3")),
        ("google/gemma-4-27b-it", ("gemma4", "gemma4")),
        ("mistralai/Ministral-8B-Instruct", ("mistral", None)),
        ("mistralai/Magistral-Small", ("mistral", "mistral")),
        ("meta-llama/Llama-3.1-8B-Instruct", (None, None)),
    ],
)
def test_parsers_follow_the_model_family(model, expected):
    assert parsers(model) == expected


def test_paper_model_config():
    cfg = LLMServeConfig(
        model="Qwen/Qwen3.5-9B",
        tensor_parallel_size=2,
        replicas=AutoscalingSettings(min_replicas=1, max_replicas=4, target_ongoing_requests=32),
    )
    config = llm_config(cfg)
    assert config["model_loading_config"] == {"model_id": "Qwen3.5-9B", "model_source": "Qwen/Qwen3.5-9B"}
    engine = config["engine_kwargs"]
    assert engine["tensor_parallel_size"] == 2 and engine["max_model_len"] == 65536
    assert engine["dtype"] == "bfloat16" and engine["gpu_memory_utilization"] == 0.85
    assert engine["enable_auto_tool_choice"] is True
    assert (engine["tool_call_parser"], engine["reasoning_parser"]) == ("qwen3_coder", "qwen3")
    autoscaling = config["deployment_config"]["autoscaling_config"]
    assert (
        autoscaling["min_replicas"],
        autoscaling["max_replicas"],
        autoscaling["target_ongoing_requests"],
    ) == (
        1,
        4,
        32,
    )
    assert "accelerator_type" not in config


def test_overrides_and_fixed_replicas():
    config = llm_config(
        {
            "model": "/models/my-llama",
            "served_model_name": "policy",
            "tool_call_parser": "llama3_json",
            "accelerator_type": "A100-80G",
            "engine_kwargs": {"enable_prefix_caching": True, "max_model_len": 8192},
            "replicas": {"min_replicas": 2, "max_replicas": 2},
        }
    )
    assert config["model_loading_config"]["model_id"] == "policy"
    assert config["engine_kwargs"]["tool_call_parser"] == "llama3_json"
    assert "reasoning_parser" not in config["engine_kwargs"]
    assert config["engine_kwargs"]["enable_prefix_caching"] is True
    assert config["engine_kwargs"]["max_model_len"] == 8192  # engine_kwargs win
    assert config["deployment_config"]["num_replicas"] == 2
    assert config["accelerator_type"] == "A100-80G"


def test_bad_settings_raise():
    for bad in (
        {"tensor_parallel_size": 0},
        {"gpu_memory_utilization": 1.5},
        {"replicas": {"min_replicas": 3, "max_replicas": 1}},
    ):
        with pytest.raises(ValueError):
            llm_config(bad)
    with pytest.raises(ValueError, match="invalid llm settings"):
        load_llm_config({"modell": "x"})


def test_config_is_accepted_by_ray_serve_llm_models():
    """Ray Serve LLM's own pydantic model takes our dict; its module imports without vLLM."""
    models = pytest.importorskip("ray.llm._internal.serve.core.configs.llm_config")
    config = models.LLMConfig(**llm_config(LLMServeConfig()))
    assert config.model_id == "Qwen3.5-9B"
    assert config.engine_kwargs["tool_call_parser"] == "qwen3_coder"
    assert config.deployment_config["max_ongoing_requests"] == 64


def test_build_app_without_vllm_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.serve.llm", None)  # as where vLLM is missing: the import fails
    with pytest.raises(ImportError, match="pip install -e '.\\[gpu\\]'"):
        build_app(LLMServeConfig())
    assert "gpu" in INSTALL_HINT


@pytest.mark.gpu
@pytest.mark.skipif(
    not HAS_VLLM, reason="needs a GPU machine with vLLM (the gpu extra; vLLM ships GPU builds only)"
)
def test_build_app_with_vllm():
    assert build_app(LLMServeConfig(model="Qwen/Qwen3.5-4B")) is not None
