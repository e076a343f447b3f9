"""One profile loader for the CLI and the Serve app builders: lookup, ``key=value`` overrides, typed sections,
and bad input as one ``ValueError``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sws.config import (
    LLMServeConfig,
    ServeConfig,
    apply_overrides,
    load_config,
    load_section,
    merge_section,
    profile_section,
)

MODULES = [
    "sws.config",
    *(f"sws.config.{m}" for m in ("corpus", "eval", "index", "loader", "run", "serving")),
]


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    subprocess.run(
        [sys.executable, "-c", f"import {module}"], check=True, cwd=Path(__file__).resolve().parents[2]
    )


def test_overrides_and_profiles():
    cfg = load_config("local", ["chunk.target_tokens=512", "serve.port=9000"])
    assert (cfg.chunk.target_tokens, cfg.serve.port) == (512, 9000)
    assert load_config("paper").embedder.kind == "qwen3"
    with pytest.raises(ValueError, match=r"config profile 'nope' not found \(known: local, paper"):
        load_config("nope")
    with pytest.raises(ValueError, match="not found"):
        profile_section("nope", "serve")
    with pytest.raises(ValueError, match="must look like key=value"):
        load_config("local", ["chunk.target_tokens"])
    with pytest.raises(ValueError, match="invalid config"):
        load_config("local", ["chunk.no_such_key=1"])
    with pytest.raises(ValueError, match="invalid override"):
        load_config("local", ["chunk.drop_sections=[a"])


def test_apply_overrides_returns_a_copy():
    cfg = ServeConfig()
    changed = apply_overrides(cfg, ["port=1234", "embedding.batching=false"], "serve")
    assert (changed.port, changed.embedding.batching) == (1234, False)
    assert (cfg.port, cfg.embedding.batching) == (ServeConfig().port, True)
    with pytest.raises(ValueError, match="invalid serve override"):
        apply_overrides(cfg, ["port=eighty"], "serve")


def test_broken_profile_file_is_a_value_error(tmp_path):
    """Was a raw YAML ScannerError from the Serve app builders (only load_config wrapped it)."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("serve: {port: 9000\n")
    for load in (
        lambda: load_config(str(broken)),
        lambda: profile_section(str(broken), "serve"),
        lambda: merge_section(LLMServeConfig, {"profile": str(broken)}, "llm"),
        lambda: load_section(LLMServeConfig, str(broken), "llm"),
    ):
        with pytest.raises(ValueError, match=r"invalid config \(broken.yaml\)"):
            load()


def test_a_section_comes_from_a_profile_or_a_file_of_its_fields(tmp_path):
    """``sws serve --llm PROFILE_OR_YAML``: a profile's section over the defaults (none: the defaults), or
    a YAML of the section's own fields, checked like every config."""
    assert load_section(LLMServeConfig, "paper", "llm") == LLMServeConfig()
    profile = tmp_path / "profile.yaml"
    profile.write_text("name: cpu\nllm: {model: /models/tiny, device: cpu}\n")
    fields_only = tmp_path / "llm.yaml"
    fields_only.write_text("model: /models/tiny\ndevice: cpu\n")
    for source in (profile, fields_only):
        cfg = load_section(LLMServeConfig, str(source), "llm")
        assert (cfg.model, cfg.device, cfg.max_model_len) == ("/models/tiny", "cpu", 65_536)
    fields_only.write_text("modell: /models/tiny\n")
    with pytest.raises(ValueError, match=r"invalid llm settings \(llm.yaml\).*modell"):
        load_section(LLMServeConfig, str(fields_only), "llm")
