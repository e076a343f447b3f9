"""The actor LLM app's configuration, built and checked without vLLM or a GPU (``serve/llm.py``)."""

from __future__ import annotations

import sys

import pytest

from serve import llm
from serve.llm import INSTALL_HINT, build_app, check_cpu_install, llm_config, load_llm_config
from serve.llm_parsers import chat_template, parsers, template_tool_format
from sws.config import AutoscalingSettings, LLMServeConfig
from tests.serve.app_graph import autoscaling_of, deployments_of


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Qwen/Qwen3.5-9B", ("qwen3_coder", "qwen3")),
        ("Qwen/Qwen3.5-4B", ("qwen3_coder", "qwen3")),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", ("qwen3_coder", "qwen3")),
        ("/models/qwen3-32b-instruct", ("hermes", "qwen3")),  # plain Qwen3: JSON tool calls
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
    assert "'.[gpu]'" in INSTALL_HINT and "'.[llm-cpu]'" in INSTALL_HINT


def test_cpu_device_config():
    config = llm_config(
        {"model": "/models/qwen3-8b", "device": "cpu", "max_model_len": 8192, "cpu_kv_cache_gib": 2}
    )
    engine = config["engine_kwargs"]
    assert (engine["enable_chunked_prefill"], engine["max_num_batched_tokens"]) == (False, 8192)
    assert "gpu_memory_utilization" not in engine and "enforce_eager" not in engine
    assert config["accelerator_config"] == {"kind": "cpu"}
    assert config["runtime_env"] == {"env_vars": {"VLLM_CPU_KVCACHE_SPACE": "2"}}
    every_core = llm_config({"device": "cpu", "max_model_len": 4096, "cpu_reserved_cores": 0})
    assert every_core["runtime_env"]["env_vars"]["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
    assert config["placement_group_config"] == {"bundle_per_worker": {"CPU": 1.0}}
    assert config["deployment_config"]["ray_actor_options"] == {"num_cpus": 0}  # shares the engine's bundle
    gpu = llm_config({"model": "/models/qwen3-8b", "max_model_len": 8192})
    assert (
        gpu["engine_kwargs"]["gpu_memory_utilization"] == 0.85
        and "enable_chunked_prefill" not in gpu["engine_kwargs"]
    )
    assert not {"accelerator_config", "runtime_env", "placement_group_config"} & set(gpu)


@pytest.mark.parametrize(
    "engine_kwargs", [{"enable_chunked_prefill": True}, {"max_num_batched_tokens": 2048}]
)
def test_cpu_settings_that_crash_vllm_cpu_raise(engine_kwargs):
    with pytest.raises(ValueError, match="chunked prefill crashes"):
        llm_config({"device": "cpu", "max_model_len": 4096, "engine_kwargs": engine_kwargs})
    assert llm_config({"max_model_len": 4096, "engine_kwargs": engine_kwargs})  # gpu: vLLM's business


@pytest.mark.parametrize(
    "bad",
    [
        {"device": "tpu"},
        {"device": "cpu", "accelerator_type": "H100"},
        {"device": "cpu", "cpu_kv_cache_gib": 0},
        {"device": "cpu", "cpu_reserved_cores": -1},
    ],
)
def test_bad_device_settings_raise(bad):
    with pytest.raises(ValueError, match="device"):
        llm_config(bad)


def test_eager_template_and_strict_level_reach_the_engine(tmp_path):
    template = tmp_path / "tools.jinja"
    template.write_text("{%- for m in messages %}<tool_call><function={{ m.name }}>{%- endfor %}")
    engine = llm_config(
        {
            "model": "/models/qwen3-8b",
            "enforce_eager": True,
            "chat_template": str(template),
            "tool_strict_level": "function",
        }
    )["engine_kwargs"]
    assert engine["enforce_eager"] is True and engine["tool_strict_level"] == "function"
    assert engine["chat_template"] == template.read_text()  # the text: replicas need not see the file
    assert engine["tool_call_parser"] == "qwen3_coder"  # what this template writes, not the name's hermes
    assert not {"chat_template", "tool_strict_level", "enforce_eager"} & set(llm_config({})["engine_kwargs"])


def test_tool_format_of_a_template(tiny_qwen3_dir):
    assert template_tool_format(chat_template(str(tiny_qwen3_dir))) == "hermes"
    assert template_tool_format("<tool_call>\n<function=search>") == "qwen3_coder"
    assert template_tool_format("{{ messages }}") is None
    assert parsers(str(tiny_qwen3_dir)) == ("hermes", "qwen3")


def test_a_family_without_a_parser_gets_the_form_its_template_writes(tmp_path):
    """sws's SmolLM2 template (``sws fetch model smollm2`` writes it into the folder) writes hermes JSON calls."""
    from importlib import resources

    sws_template = (resources.files("sws") / "data" / "smollm2-tools.jinja").read_text()
    folder = tmp_path / "smollm2"
    folder.mkdir()
    (folder / "chat_template.jinja").write_text(sws_template)
    assert parsers(str(folder)) == ("hermes", None)
    assert parsers("/models/SmolLM2-135M-Instruct") == (None, None)  # no template to read: no parser
    engine = llm_config({"model": str(folder), "device": "cpu", "max_model_len": 8192})["engine_kwargs"]
    assert (engine["enable_auto_tool_choice"], engine["tool_call_parser"]) == (True, "hermes")


def test_cpu_config_is_accepted_by_ray_serve_llm_models():
    models = pytest.importorskip("ray.llm._internal.serve.core.configs.llm_config")
    config = models.LLMConfig(**llm_config({"device": "cpu", "max_model_len": 4096}))
    assert config.accelerator_config.kind == "cpu"


def test_cpu_install_check_names_the_packages_to_remove(monkeypatch):
    check_cpu_install()  # the README's install: none of the torchvision family is left
    monkeypatch.setattr(llm, "CUDA_ONLY_ON_PYPI", ("pytest",))  # an installed distribution, no +cpu build
    with pytest.raises(RuntimeError, match="pip uninstall -y pytest"):
        check_cpu_install()


@pytest.mark.parametrize("device, bundle", [("gpu", {"CPU": 1, "GPU": 1}), ("cpu", {"CPU": 1.0, "GPU": 0})])
def test_built_app_places_the_engine_and_autoscales_the_server(device, bundle):
    """The unstarted app (nothing runs, no GPU needed to build it): the guarded ingress in front of one LLM
    server whose engine bundle is the device's and whose replicas follow ``replicas``."""
    replicas = {"min_replicas": 1, "max_replicas": 3, "target_ongoing_requests": 4.0}
    app = build_app(
        {"model": "Qwen/Qwen3.5-4B", "device": device, "max_model_len": 4096, "replicas": replicas}
    )
    deployments = deployments_of(app)
    assert sorted(deployments) == ["GuardedOpenAiIngress", "NodeIPLLMServer:Qwen3_5-4B"]
    server = deployments["NodeIPLLMServer:Qwen3_5-4B"]
    assert server._replica_config.placement_group_bundles == [bundle]
    assert {k: v for k, v in autoscaling_of(server).items() if k in replicas} == replicas


@pytest.mark.parametrize(("source", "skipped"), [("/models/qwen3-8b", True), ("s3://models/qwen3-8b", False)])
def test_node_initialisation_is_skipped_only_where_it_fetches_nothing(ray_local, source, skipped):
    """A model without a cloud mirror on the replica's own node: Ray Serve LLM's download task is skipped
    (torch's kernels folder made here instead); a bucket's model is still fetched on every node."""
    import asyncio

    from ray.llm._internal.serve.core.configs.llm_config import LLMConfig
    from ray.util.placement_group import placement_group, remove_placement_group

    from serve.llm_deployments import LocalModelCallback

    config = LLMConfig(**llm_config({"model": source, "device": "cpu", "max_model_len": 1024}))
    group = placement_group([{"CPU": 0.01}])
    ray_local.get(group.ready())
    try:
        callback = LocalModelCallback(llm_config=config, ctx_kwargs={"placement_group": group})
        asyncio.run(callback.on_before_node_init())
        assert callback.ctx.run_init_node is not skipped
    finally:
        remove_placement_group(group)
