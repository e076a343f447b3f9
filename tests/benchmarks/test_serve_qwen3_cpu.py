"""``benchmarks/qwen3_queries.py`` (``serve_qwen3_cpu.py``'s parts): the random-weight model loads in
sentence-transformers as a user loads Qwen3-Embedding and embeds what sws embeds; the variants, the recall
gate and the question split."""

from __future__ import annotations

import numpy as np
import pytest

from sws.index.embedders.precision import min_cosine
from tests.benchmarks.conftest import bench_module

q = bench_module("qwen3_queries")
QUESTIONS = ["Who painted the Mona Lisa?", "capital of France", "When did the Berlin Wall fall and why?"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return q.model_dir(tiny=True, work=tmp_path_factory.mktemp("qwen3"))


def test_sentence_transformers_computes_what_sws_computes(model):
    st, sws = q.sentence_transformer(model), q.variant(model, "torch")
    assert st.tokenizer("x")["input_ids"][-1] == q.EOS_ID  # as the real tokenizer: EOS appended
    assert sws.query_task == q.QWEN3_QUERY_TASK  # the directory's name keeps Qwen3-Embedding's task
    queries = st.encode(QUESTIONS, prompt=q.QUERY_PROMPT, batch_size=32, normalize_embeddings=True)
    assert min_cosine(queries, sws.embed_queries(QUESTIONS)) > 0.9999
    documents = st.encode(QUESTIONS, batch_size=32, normalize_embeddings=True)
    assert min_cosine(documents, sws.embed_documents(QUESTIONS)) > 0.9999
    assert q.st_round(st, QUESTIONS, batch=2, seconds=0)["requests"] == 2  # one batch however late


def test_variants_are_measured_against_float32(model):
    fp32 = q.variant(model, "torch").embed_queries(QUESTIONS)
    for name in ("torch-bf16", "torch-int8"):
        vectors = q.variant(model, name).embed_queries(QUESTIONS)
        assert vectors.shape == fp32.shape and 0.9 < min_cosine(vectors, fp32) < 1.0
    with pytest.raises(ValueError, match="unknown variant"):
        q.variant(model, "onnx")


def test_recall_is_exact_top10_agreement():
    rng = np.random.default_rng(0)
    index, queries = rng.standard_normal((200, 8)), rng.standard_normal((5, 8))
    expected = q.top10(index, queries)
    assert q.recall_at_10(expected, expected) == 1.0
    assert q.recall_at_10(q.top10(index, -queries), expected) == 0.0


def test_queries_and_index_texts_are_disjoint_questions():
    queries, others = q.split_questions(30, 500)
    assert len(queries) == 30 and len(others) == 500 and not set(queries) & set(others)
    assert len(set(others)) == 500
