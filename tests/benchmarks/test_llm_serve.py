"""``benchmarks/llm_serve.py``'s direct side gets the engine of the Ray side: the engine arguments of
``serve.llm.llm_config`` as flags, read back by vLLM's own OpenAI-server parser (the ``llm-cpu`` extra) to
the same values."""

from __future__ import annotations

import pytest

from serve.llm import llm_config
from sws.config import LLMServeConfig
from tests.benchmarks.conftest import bench_module

llm_servers = bench_module("llm_servers")


@pytest.mark.llm
def test_vllms_server_parses_the_flags_back_to_the_engine_arguments(tiny_qwen3_dir):
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    cfg = LLMServeConfig(model=str(tiny_qwen3_dir), device="cpu", max_model_len=4096, enforce_eager=True)
    engine = llm_config(cfg)["engine_kwargs"]
    flags = llm_servers.engine_flags(engine)
    assert "--no-enable-chunked-prefill" in flags and "--enforce-eager" in flags
    parsed = make_arg_parser(FlexibleArgumentParser()).parse_args(["--model", cfg.model, *flags])
    assert {key: getattr(parsed, key) for key in engine} == engine
