"""The tiny random-weight Qwen3 model of the GPU check: it loads and generates on the CPU, its tokenizer is
the real Qwen3 tokenizer, and its chat template renders tools, tool calls and tool responses as Qwen3's."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer

from sws.env import tool_schemas
from tests.benchmarks.conftest import bench_module

tiny = bench_module("tiny_qwen3")
TEXTS = [
    "Ventura Pons directed the film Actrius (1996), a Catalan comedy.",
    "Section 1: History\n| Year | Event |\n| --- | --- |\n| 1879 | Göttingen — 東京 — مرحبا 🎬 |",
    "<|im_start|>user\nWho?<|im_end|>\n<tool_call>\n{}\n</tool_call><think>\n\n</think>",
    "   leading spaces, tabs\tand\r\nnewlines  ",
]


@pytest.fixture(scope="module")
def tokenizer(tiny_qwen3_dir):
    return AutoTokenizer.from_pretrained(tiny_qwen3_dir)


def test_loads_and_generates_on_cpu(tiny_qwen3_dir, tokenizer):
    import torch

    model = AutoModelForCausalLM.from_pretrained(tiny_qwen3_dir)
    assert model.config.model_type == "qwen3" and model.config.vocab_size == tiny.VOCAB_SIZE
    assert model.dtype == torch.bfloat16
    assert model.generation_config.eos_token_id == [tiny.IM_END, tiny.BOS]
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hello"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    out = model.generate(**prompt, max_new_tokens=4, min_new_tokens=4, do_sample=False)
    assert out.shape == (1, prompt["input_ids"].shape[1] + 4)
    assert out[0, -4:].max() < tiny.VOCAB_SIZE


def test_tokenizer_encodes_as_the_real_qwen3_tokenizer(tokenizer):
    real = Tokenizer.from_file(str(tiny.TOKENIZER))
    assert len(tokenizer) == real.get_vocab_size(with_added_tokens=True) == 151_669
    for text in TEXTS:
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert ids == real.encode(text, add_special_tokens=False).ids
        assert tokenizer.decode(ids) == text
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    assert tokenizer.convert_tokens_to_ids(["<|endoftext|>", "<|im_end|>"]) == [tiny.BOS, tiny.IM_END]


def test_parser_markers_are_single_tokens(tokenizer):
    """vLLM's qwen3_coder tool parser and qwen3 reasoning parser look these tokens up in the vocabulary."""
    for marker in ("<tool_call>", "</tool_call>", "<think>", "</think>", "<|im_start|>", "<|im_end|>"):
        assert len(tokenizer.encode(marker, add_special_tokens=False)) == 1, marker


def test_chat_template_renders_tools_and_a_tool_call(tokenizer):
    tools = tool_schemas()
    messages = [
        {"role": "system", "content": "You are a search agent."},
        {"role": "user", "content": "Who directed Actrius?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "Actrius"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Result 1: Actrius (1996) by Ventura Pons"},
    ]
    text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nYou are a search agent.\n\n# Tools\n")
    rendered_tools = text.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].splitlines()
    assert [json.loads(line) for line in rendered_tools] == tools
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "search", "arguments": {"query": "Actrius"}}\n</tool_call>'
        "<|im_end|>\n<|im_start|>user\n<tool_response>\nResult 1: Actrius (1996) by Ventura Pons\n"
        "</tool_response><|im_end|>\n<|im_start|>assistant\n"
    ) in text
    assert text.endswith("<|im_start|>assistant\n")
    no_thinking = tokenizer.apply_chat_template(
        messages[:2], tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert no_thinking.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_the_ends_turns_model_ends_every_turn_at_once(tmp_path, tokenizer):
    """What keeps a served agent episode short: ``<|im_end|>`` first, sampled with Qwen3's settings too."""
    import torch

    model = AutoModelForCausalLM.from_pretrained(tiny.make_tiny_qwen3(tmp_path / "quiet", ends_turns=True))
    for question in ("Hello", "Who directed the film Actrius? Search Wikipedia first."):
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": question}],
            tools=tool_schemas(),
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        torch.manual_seed(0)
        out = model.generate(**prompt, max_new_tokens=4)  # the generation config: sampled at 0.6, top-p 0.95
        assert out[0, prompt["input_ids"].shape[1] :].tolist() == [tiny.IM_END]
