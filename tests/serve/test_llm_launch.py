"""``sws serve --llm`` before anything is deployed (``serve/llm_launch.py``, ``sws/cli/serve.py``): the LLM
takes the retrieval service's listener rules, its own route prefix, and Ray CPUs of its own; a local Ray is
sized for both apps, one too small (or without the GPU a ``device: gpu`` model needs) is refused. The served
run is ``test_llm_served.py``."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from serve.llm_launch import (
    beside_retrieval,
    check_resources,
    local_ray_cpus,
    start_cpus,
    with_fetched_model,
)
from sws.cli.serve import serve
from sws.config import AutoscalingSettings, LLMServeConfig, QueryEmbeddingConfig, ServeConfig

CPU_LLM = LLMServeConfig(model="/models/tiny", device="cpu", max_model_len=4096)


def test_the_llm_takes_the_services_listener_rules_and_a_prefix_of_its_own():
    service = ServeConfig(
        host="0.0.0.0", allowed_hosts=["tools.internal"], allowed_origins=["https://ui.lab"]
    )
    llm = beside_retrieval(CPU_LLM, service)
    assert (llm.host, llm.allowed_hosts, llm.allowed_origins, llm.token_env, llm.route_prefix) == (
        "0.0.0.0",
        ["tools.internal"],
        ["https://ui.lab"],
        "SWS_SERVE_TOKEN",
        "/llm",
    )
    for prefix in ("/", "", "llm"):
        with pytest.raises(ValueError, match="a path of its own"):
            beside_retrieval(LLMServeConfig(route_prefix=prefix), service)


@pytest.mark.llm
def test_a_packaged_models_name_serves_its_fetched_folder(smollm2_cache, tmp_path, monkeypatch):
    """``sws serve --llm smollm2`` serves ``sws fetch model smollm2``'s folder (verified, not converted again),
    not a hub name vLLM would look up online; a path, or a name that is no packaged model, is served as is."""
    monkeypatch.setenv("SWS_CACHE", str(smollm2_cache))
    folder = smollm2_cache / "models" / "smollm2"
    assert with_fetched_model(LLMServeConfig(model="smollm2")).model == str(folder)
    assert with_fetched_model(CPU_LLM) == CPU_LLM
    assert with_fetched_model(LLMServeConfig(model="Qwen/Qwen3-8B")).model == "Qwen/Qwen3-8B"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smollm2").mkdir()  # a folder of that name where sws serve runs: the user's own
    assert with_fetched_model(LLMServeConfig(model="smollm2")).model == "smollm2"


def test_the_apps_ray_cpus_at_start():
    """Retrieval: 0.5 per replica and 1 for the query embedder; the LLM: ``num_cpus`` per engine worker and
    1 for its OpenAI ingress (a GPU engine's workers take GPUs instead)."""
    service = ServeConfig()
    assert start_cpus(service, None) == 1.5
    assert start_cpus(service, CPU_LLM) == 3.5
    assert start_cpus(service, LLMServeConfig(tensor_parallel_size=2)) == 2.5
    unbatched = ServeConfig(
        replicas=AutoscalingSettings(2, 2), embedding=QueryEmbeddingConfig(batching=False)
    )
    assert start_cpus(unbatched, LLMServeConfig(device="cpu", num_cpus=2.0)) == 4.0
    assert local_ray_cpus(service, CPU_LLM, None) == max(os.cpu_count(), 4)
    assert local_ray_cpus(service, CPU_LLM, 8) == 8
    assert local_ray_cpus(service, None, None) is None  # Ray's own default, as without --llm


@pytest.mark.ray
def test_a_ray_too_small_or_without_a_gpu_is_refused(ray_local):
    """The session's Ray has 2 CPUs and no GPU: the tiny CPU model beside retrieval reserves 3.5."""
    with pytest.raises(ValueError, match=r"reserve 3.5 Ray CPUs .* this Ray has 2: pass --num-cpus 4"):
        check_resources(ServeConfig(), CPU_LLM)
    with pytest.raises(ValueError, match="this Ray has no GPU: use llm.device=cpu"):
        check_resources(ServeConfig(embedding=QueryEmbeddingConfig(batching=False)), LLMServeConfig())
    check_resources(ServeConfig(), None)


def test_bad_llm_arguments_are_one_line_usage_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(serve, ["--index", str(tmp_path), "llm.max_num_seqs=8"])
    assert result.exit_code == 2 and "need --llm PROFILE_OR_YAML" in result.output
    settings = tmp_path / "llm.yaml"
    settings.write_text("model: /models/tiny\nmax_num_seqs: many\n")
    result = runner.invoke(serve, ["--index", str(tmp_path), "--llm", str(settings)])
    assert result.exit_code == 2 and "invalid llm settings (llm.yaml)" in result.output
    settings.write_text("model: /models/tiny\n")
    result = runner.invoke(serve, ["--index", str(tmp_path), "--llm", str(settings), "llm.no_such_knob=1"])
    assert result.exit_code == 2 and "invalid llm override" in result.output
