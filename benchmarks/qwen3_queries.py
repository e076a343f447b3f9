"""Queries embedded as the paper embeds them, the parts ``serve_qwen3_cpu.py`` measures (not a benchmark itself).

- :func:`model_dir`: Qwen3-Embedding-0.6B's architecture with random weights (``embed_qwen3_gpu.random_qwen3``;
  ``tiny``: 2 layers of width 256), completed with the files the real model's repository has for
  sentence-transformers (``modules.json``: Transformer, last-token Pooling, Normalize; its ``query`` prompt;
  the tokenizer appending ``<|endoftext|>``; left padding), so ``SentenceTransformer(path)`` loads it as a
  user loads ``Qwen/Qwen3-Embedding-0.6B``.
- :func:`split_questions`: the six QA sets' questions: the first ``n`` of ``serve_common.agent_queries``
  (interleaved) are the queries, the others the texts of the recall index.
- :func:`doc_vectors`: the index texts embedded as documents in float32, cached and resumable (the full-size
  model takes ~1 core-second per question on a 2-core CPU).
- :func:`variant`: the query embedder in float32 (``torch``, the reference), bf16 weights (``torch-bf16``, what
  ``Qwen3Embedder(runtime="torch-bf16")`` does) or int8 dynamic quantization of every ``Linear``
  (``torch-int8``, not a library runtime: measured to see whether one would pass the agreement gate).
- :func:`st_round`: sentence-transformers float32 ``encode`` with the reference's query prompt, the baseline.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from embed_qwen3_gpu import random_qwen3
from serve_common import DATA, QA_FILES, WORK, agent_queries

from sws.index.embedders.base import QWEN3_QUERY_TASK

VARIANTS = ("torch", "torch-bf16", "torch-int8")
EOS, EOS_ID = "<|endoftext|>", 151_643
QUERY_PROMPT = f"Instruct: {QWEN3_QUERY_TASK}\nQuery: "  # the reference's request text, before the question


def sentence_transformers_files(model: Path) -> None:
    """The files Qwen/Qwen3-Embedding-0.6B carries for sentence-transformers (idempotent)."""
    tokenizer = json.loads((model / "tokenizer.json").read_text())
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    eos = {"SpecialToken": {"id": EOS, "type_id": 0}}
    tokenizer["post_processor"] = {
        "type": "Sequence",
        "processors": [
            byte_level,
            {
                "type": "TemplateProcessing",
                "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
                "pair": [
                    {"Sequence": {"id": "A", "type_id": 0}},
                    eos,
                    {"Sequence": {"id": "B", "type_id": 0}},
                    eos,
                ],
                "special_tokens": {EOS: {"id": EOS, "ids": [EOS_ID], "tokens": [EOS]}},
            },
        ],
    }
    (model / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))
    config = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps(config | {"padding_side": "left"}))
    modules = [("0", "", "Transformer"), ("1", "1_Pooling", "Pooling"), ("2", "2_Normalize", "Normalize")]
    (model / "modules.json").write_text(
        json.dumps(
            [
                {"idx": int(i), "name": i, "path": path, "type": f"sentence_transformers.models.{kind}"}
                for i, path, kind in modules
            ]
        )
    )
    width = json.loads((model / "config.json").read_text())["hidden_size"]
    (model / "1_Pooling").mkdir(exist_ok=True)
    (model / "2_Normalize").mkdir(exist_ok=True)
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens")
    pooling = {"word_embedding_dimension": width, **{f"pooling_mode_{m}": False for m in modes}}
    pooling |= {"pooling_mode_lasttoken": True, "include_prompt": True}
    (model / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (model / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 512, "do_lower_case": False})
    )
    prompts = {"query": QUERY_PROMPT.rstrip(" "), "document": ""}  # the repository's, without the space
    (model / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine"})
    )


def model_dir(tiny: bool, work: Path = WORK) -> Path:
    """The random-weight model (made once under ``work``); its name keeps Qwen3-Embedding's query task."""
    model = work / ("qwen3-embedding-tiny-shape" if tiny else "qwen3-embedding-0.6b-shape")
    if not (model / "config.json").is_file():
        random_qwen3(model, tiny=tiny)
    if not (model / "modules.json").is_file():
        sentence_transformers_files(model)
    return model


def split_questions(n_queries: int, n_index: int) -> tuple[list[str], list[str]]:
    """The queries (interleaved over the six sets) and up to ``n_index`` other questions, each once."""
    from sws.eval.datasets import load_dataset

    queries = agent_queries("questions", n_queries)
    seen = set(queries)
    others = []
    for name in QA_FILES:
        for item in load_dataset(DATA / "qa" / name):
            if (q := item.question.strip()) not in seen:
                seen.add(q)
                others.append(q)
    order = np.random.default_rng(0).permutation(len(others))  # every set represented in a shorter index
    return queries, [others[i] for i in sorted(order[:n_index])]


def doc_vectors(embedder: Any, texts: list[str], cache: Path, part: int = 512) -> tuple[np.ndarray, float]:
    """``embedder.embed_documents(texts)``, ``part`` texts at a time, each part kept under ``cache`` (a rerun
    resumes); returns the vectors and the seconds spent now."""
    cache.mkdir(parents=True, exist_ok=True)
    started, rows = time.perf_counter(), []
    for lo in range(0, len(texts), part):
        path = cache / f"part-{lo:07d}-{min(lo + part, len(texts)):07d}.npy"
        if not path.is_file():
            np.save(path.with_suffix(".tmp.npy"), embedder.embed_documents(texts[lo : lo + part]))
            path.with_suffix(".tmp.npy").replace(path)
        rows.append(np.load(path))
    return np.vstack(rows), time.perf_counter() - started


def variant(model: Path, name: str, max_length: int = 512) -> Any:
    """The query embedder in ``name`` (:data:`VARIANTS`), ungated: the gate is measured, not applied."""
    import torch

    from sws.index.embedders import Qwen3Embedder

    embedder = Qwen3Embedder(str(model), device="cpu", max_length=max_length, runtime="torch")
    if name == "torch-bf16":  # what the library's "torch-bf16" runtime does once its gate passes
        embedder._model = embedder._model.to(torch.bfloat16)
    elif name == "torch-int8":  # torch.ao's eager dynamic quantization: deprecated for torchao, still in 2.13
        from torch.ao.quantization import quantize_dynamic

        with warnings.catch_warnings(action="ignore", category=DeprecationWarning):
            embedder._model = quantize_dynamic(embedder._model, {torch.nn.Linear}, dtype=torch.qint8)
    elif name != "torch":
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    return embedder


def top10(index: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact top 10 rows by inner product (the recall gate isolates the query vectors from any ANN error)."""
    scores = queries @ index.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :10]


def recall_at_10(found: np.ndarray, expected: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, expected, strict=True)]))


def sentence_transformer(model: Path) -> Any:
    """``SentenceTransformer`` in float32 on the CPU, as a user loads the model without sws."""
    import torch
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model), device="cpu", model_kwargs={"dtype": torch.float32})


def st_round(st: Any, queries: list[str], batch: int, seconds: float) -> dict[str, Any]:
    """``st.encode`` over the queries with the reference's prompt, ``batch`` at a time, for ``seconds`` (one
    batch at least): queries per second."""
    done, started = 0, time.perf_counter()
    while not done or time.perf_counter() - started < seconds:
        texts = [queries[(done + i) % len(queries)] for i in range(batch)]
        st.encode(texts, prompt=QUERY_PROMPT, batch_size=batch, normalize_embeddings=True)
        done += batch
    elapsed = time.perf_counter() - started
    return {"batch": batch, "requests": done, "qps": round(done / elapsed, 2)}
