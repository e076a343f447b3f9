"""``benchmarks/llm_serve.py``: what it serves (``--model``), its report (ratios, goals, episodes) and the
figures of its ``sws eval`` runs; and its direct side gets the engine of the Ray side: the engine arguments of
``serve.llm.llm_config`` as flags, read back by vLLM's own OpenAI-server parser (the ``llm-cpu`` extra) to
the same values."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import pytest

from serve.llm import llm_config, load_llm_source
from tests.benchmarks.conftest import bench_module

llm_servers = bench_module("llm_servers")
llm_serve = bench_module("llm_serve")


def _args(model: str, tmp_path, **changes) -> argparse.Namespace:
    defaults = {"concurrency": [1, 8], "episode_concurrency": [1, 8], "max_model_len": None}
    return argparse.Namespace(model=model, work=tmp_path, **{**defaults, **changes})


def test_a_model_folder_is_served_on_the_cpu_engine_with_a_slot_per_request(tiny_qwen3_dir, tmp_path):
    cfg = llm_serve.served_config(_args(str(tiny_qwen3_dir), tmp_path, episode_concurrency=[1, 16]))
    assert (cfg.model, cfg.device, cfg.enforce_eager) == (str(tiny_qwen3_dir), "cpu", True)
    assert (cfg.max_model_len, cfg.max_num_seqs, cfg.cpu_kv_cache_gib) == (4096, 16, 1)
    with pytest.raises(ValueError, match="not smollm2, tiny or a Hugging Face model folder"):
        llm_serve.served_config(_args(str(tmp_path), tmp_path))


@pytest.mark.llm
def test_smollm2_is_the_fetched_folder_with_its_profiles_llm_section(smollm2_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("SWS_CACHE", str(smollm2_cache))
    cfg = llm_serve.served_config(_args("smollm2", tmp_path, max_model_len=4096))
    profile = load_llm_source("smollm2")
    assert cfg == replace(profile, model=str(smollm2_cache / "models" / "smollm2"), max_model_len=4096)
    assert (cfg.served_model_name, cfg.tool_strict_level) == ("SmolLM2-135M-Instruct", "parameter")


@pytest.mark.llm
@pytest.mark.parametrize("model", ["tiny", "smollm2"])
def test_vllms_server_parses_the_flags_back_to_the_engine_arguments(model, tmp_path, request, monkeypatch):
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    if model == "tiny":
        model = str(request.getfixturevalue("tiny_qwen3_dir"))
    else:
        monkeypatch.setenv("SWS_CACHE", str(request.getfixturevalue("smollm2_cache")))
    cfg = llm_serve.served_config(_args(model, tmp_path))
    engine = llm_config(cfg)["engine_kwargs"]
    flags = llm_servers.engine_flags(engine)
    assert "--no-enable-chunked-prefill" in flags and "--enforce-eager" in flags
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(["--model", cfg.model, *flags])
    assert {key: getattr(parsed, key) for key in engine} == engine


def test_episode_figures_count_every_outcome_per_hour_of_the_harness():
    summary = {"ran": 4, "elapsed_s": 120.0, "f1": 0.125, "recorded": 4, "errored": 1}
    rows = [
        {"status": "submitted", "rounds": 3, "total_tokens": 3000},
        {"status": "max_rounds", "rounds": 8, "total_tokens": 9000},
        {"status": "submitted", "rounds": 2, "total_tokens": None},
        {"status": "error", "rounds": 1, "total_tokens": 0},
    ]
    figures = llm_serve.episode_figures(summary, rows, wall_s=151.26)
    assert figures == {
        "episodes": 4,
        "episodes_per_hour": 120.0,
        "outcomes": {"error": 1, "max_rounds": 1, "submitted": 2},
        "seconds": 120.0,
        "wall_s": 151.3,
        "rounds_mean": 3.5,
        "tokens_per_episode": 3000,
        "f1": 0.125,
    }
    with pytest.raises(ValueError, match="recorded no episode"):
        llm_serve.episode_figures({**summary, "ran": 0}, [], 1.0)


def test_report_emits_per_side_figures_ratios_against_the_goal_and_the_episodes(tmp_path, capsys):
    servers = {
        side: llm_servers.Server(side, f"http://{side}/v1", "m", startup, None, tmp_path / side)
        for side, startup in (("ray", 100.0), ("direct", 50.0))
    }
    rounds = {}
    for side, prefill, decode, ttft in (("ray", 950, 80, 0.2), ("direct", 1000, 100, 0.1)):
        rounds[side, "prefill", 8] = [{"tokens_per_s": prefill}, {"tokens_per_s": prefill + 10}]
        rounds[side, "decode", 8] = [{"tokens_per_s": decode}] * 2
        rounds[side, "ttft", 8] = [{"ttft_s": ttft}] * 2
    runs = {1: {"episodes": 3, "episodes_per_hour": 90.0, "outcomes": {"submitted": 3}}}
    args = argparse.Namespace(model="m", work=tmp_path)
    assert llm_serve.report(servers, rounds, {"ray": [], "direct": []}, runs, args) is False
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by = {(r["measurement"], r.get("side")): r for r in lines}
    assert by["prefill", "ray"]["tokens_per_s"] == 955 and by["prefill", "direct"]["tokens_per_s"] == 1005
    assert (by["prefill_ray_over_direct", None]["ratio"], by["prefill_ray_over_direct", None]["goal"]) == (
        0.95,
        0.9,
    )
    assert by["decode_ray_over_direct", None]["ratio"] == 0.8  # below the goal: the run fails
    assert (by["ttft_ray_over_direct", None]["ratio"], by["ttft_ray_over_direct", None]["goal"]) == (
        0.5,
        None,
    )
    assert by["startup", None]["seconds"] == {"ray": 100.0, "direct": 50.0}
    episodes = by["episodes", "ray"]
    assert (episodes["clients"], episodes["episodes_per_hour"], episodes["outcomes"]) == (
        1,
        90.0,
        {"submitted": 3},
    )
    assert lines[-1]["measurement"] == "summary" and lines[-1]["passed"] is False
    assert lines[-1]["args"]["work"] == str(tmp_path)
