"""Qwen3-Embedding logic on a tiny randomly initialised Qwen3 with the real Qwen3 tokenizer (no weights)."""

import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from sws.index.embedders import (
    QWEN3_QUERY_TASK,
    Qwen3Embedder,
    format_query,
    last_token_pool,
    make_embedder,
    precision,
)
from sws.index.embedders.qwen3 import length_batches

TOKENIZER = Path(__file__).parents[1] / "data" / "qwen3_tokenizer.json"
TEXTS = ["Albert Einstein was a physicist.", "short", "Section 0: Preamble\nA much longer chunk " * 6]


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory) -> Path:
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

    out = tmp_path_factory.mktemp("qwen3-embedding-tiny")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(TOKENIZER), eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    tokenizer.save_pretrained(out)
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        max_position_embeddings=512,
    )
    Qwen3Model(config).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def embedder(tiny_qwen3) -> Qwen3Embedder:
    return Qwen3Embedder(str(tiny_qwen3), device="cpu", max_length=64, batch_size=2, max_batch_tokens=64)


def reference_embedding(emb: Qwen3Embedder, text: str) -> np.ndarray:
    """The pooling by hand: one unpadded EOS-terminated sequence, last hidden state, unit norm."""
    ids = emb._tokenizer(text, truncation=True, max_length=emb.max_length - 1)["input_ids"] + [emb._eos]
    with torch.inference_mode():
        hidden = emb._model(input_ids=torch.tensor([ids])).last_hidden_state[0, -1].numpy()
    return hidden / np.linalg.norm(hidden)


def test_inputs_end_with_eos_and_truncate(embedder):
    ids = embedder.token_ids(["hello world", "word " * 500])
    assert all(row[-1] == embedder._eos for row in ids)
    assert len(ids[0]) == 3 and len(ids[1]) == 64


def test_batched_left_padded_equals_unpadded_reference(embedder):
    got = embedder.embed_documents(TEXTS)
    assert got.dtype == np.float32 and got.shape == (3, 32)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    for row, text in zip(got, TEXTS):
        np.testing.assert_allclose(row, reference_embedding(embedder, text), atol=2e-5)
    alone = [embedder.embed_documents([t])[0] for t in TEXTS]
    np.testing.assert_allclose(got, np.stack(alone), atol=2e-5)


def test_query_prefix_exact_and_documents_unprefixed(embedder):
    assert embedder.query_task == QWEN3_QUERY_TASK
    prefixed = (
        "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: who?"
    )
    assert format_query("  who? \n", QWEN3_QUERY_TASK) == prefixed
    np.testing.assert_allclose(
        embedder.embed_queries(["  who? \n"])[0], reference_embedding(embedder, prefixed), atol=2e-5
    )
    np.testing.assert_allclose(
        embedder.embed_documents(["who?"])[0], reference_embedding(embedder, "who?"), atol=2e-5
    )


def test_tokenizer_that_adds_eos_is_not_doubled(tiny_qwen3, tmp_path):
    from tokenizers import processors
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_qwen3)
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>", special_tokens=[("<|endoftext|>", tokenizer.eos_token_id)]
    )
    tokenizer.save_pretrained(tmp_path)
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).write_bytes((tiny_qwen3 / name).read_bytes())
    emb = make_embedder("qwen3", model=str(tmp_path), device="cpu", max_length=16)
    ids = emb.token_ids(["hello world", "word " * 100])
    assert ids[0][-1] == emb._eos and ids[0][-2] != emb._eos and len(ids[1]) == 16


def test_last_token_pool_right_padding():
    hidden = torch.arange(2 * 3 * 1, dtype=torch.float32).reshape(2, 3, 1)
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    assert last_token_pool(hidden, mask)[:, 0].tolist() == [1.0, 5.0]


def test_length_batches_respect_rows_and_tokens():
    batches = length_batches([5, 50, 10, 48, 7], batch_size=2, max_batch_tokens=100)
    assert batches == [[1, 3], [2, 4], [0]]


def test_fingerprint_names_the_space_not_the_transport(embedder):
    from sws.index.embedders import OpenAIEmbedder

    remote = OpenAIEmbedder(embedder.model_id, dim=32)
    assert remote.query_task == QWEN3_QUERY_TASK
    assert remote.fingerprint == embedder.fingerprint
    assert OpenAIEmbedder(embedder.model_id, dim=64).fingerprint != embedder.fingerprint


def tiny_with(tiny_qwen3: Path, runtime: str) -> Qwen3Embedder:
    return Qwen3Embedder(
        str(tiny_qwen3), device="cpu", max_length=64, batch_size=2, max_batch_tokens=64, runtime=runtime
    )


def test_cpu_bf16_passes_the_gate_and_keeps_the_space(tiny_qwen3, embedder):
    bf16 = tiny_with(tiny_qwen3, "torch-bf16")
    info = bf16.runtime_info()
    assert (info["runtime"], info["precision"]) == ("torch-bf16", "bf16")
    assert info["min_cosine_to_fp32"] >= precision.MIN_COSINE
    assert next(bf16._model.parameters()).dtype == torch.bfloat16
    assert bf16.fingerprint == embedder.fingerprint and bf16.spec()["runtime"] == "torch-bf16"
    assert make_embedder(**bf16.spec(), device="cpu").runtime == "torch-bf16"
    assert precision.min_cosine(bf16.embed_documents(TEXTS), embedder.embed_documents(TEXTS)) >= 0.999
    assert embedder.runtime_info() == {"runtime": "torch", "precision": "fp32", "min_cosine_to_fp32": 1.0}


def test_auto_is_bf16_where_the_cpu_has_it_and_the_gate_passes(tiny_qwen3, monkeypatch, caplog):
    assert tiny_with(tiny_qwen3, "auto").runtime == ("torch-bf16" if precision.cpu_has_bf16() else "torch")
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert tiny_with(tiny_qwen3, "auto").runtime == "torch"
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)
    monkeypatch.setattr(precision, "MIN_COSINE", 1.0)  # bf16 never agrees to the last place
    with caplog.at_level(logging.WARNING):
        auto = tiny_with(tiny_qwen3, "auto")
    assert auto.runtime == "torch" and next(auto._model.parameters()).dtype == torch.float32
    assert "runtime 'auto' keeps float32: runtime 'torch-bf16': least cosine" in caplog.text
    with pytest.raises(precision.RuntimeQualityError, match="below 1.0"):
        tiny_with(tiny_qwen3, "torch-bf16")
    with pytest.raises(ValueError, match="unknown runtime 'onnx'"):
        tiny_with(tiny_qwen3, "onnx")
