"""The ONNX Runtime path of the packaged MiniLM: exported locally once, same vectors, same search results."""

import json
from pathlib import Path

import numpy as np
import pytest

from sws.cache import cache_dir
from sws.index import WikiIndex
from sws.index.embedders import SentenceTransformerEmbedder, make_embedder
from tests.index.helpers import lead_pages

QUESTIONS = Path(__file__).parents[1] / "data" / "qa" / "hotpotqa_test_questions_and_answers.json"


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory):
    """One ONNX MiniLM for the module, its export in a module-private cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWS_CACHE", str(tmp_path_factory.mktemp("onnx-cache")))
        yield SentenceTransformerEmbedder(device="cpu", runtime="onnx")


def questions(n: int = 64) -> list[str]:
    return [row["question"] for row in json.loads(QUESTIONS.read_text())[:n]]


def test_vectors_equal_torch_on_questions_and_chunks(embedder, onnx_embedder):
    chunks = [c for p in lead_pages() for c in p["chunks"]]
    for texts in (questions(), chunks, questions(1)):
        np.testing.assert_allclose(
            onnx_embedder.embed_documents(texts), embedder.embed_documents(texts), rtol=0, atol=1e-5
        )


def test_same_fingerprint_and_top10_on_the_torch_built_index(leads_root, embedder, onnx_embedder):
    """The runtime is transport, not space: a torch-built index opens with the ONNX embedder and ranks alike."""
    assert onnx_embedder.fingerprint == embedder.fingerprint
    index = WikiIndex.open(leads_root / "index", embedder=onnx_embedder)
    for q_torch, q_onnx in zip(embedder.embed_queries(questions()), onnx_embedder.embed_queries(questions())):
        onnx_rows = [row for row, _ in index.dense.search(q_onnx, 10)]
        assert len(onnx_rows) == 10 and onnx_rows == [row for row, _ in index.dense.search(q_torch, 10)]


def test_export_is_cached_and_spec_round_trips(onnx_embedder, monkeypatch, tmp_path):
    assert onnx_embedder.spec()["runtime"] == "onnx"
    monkeypatch.setenv("SWS_CACHE", str(tmp_path))
    make_embedder(**onnx_embedder.spec(), device="cpu")
    exported = list(cache_dir("onnx").glob("*.onnx"))
    assert len(exported) == 1
    stamp = exported[0].stat().st_mtime_ns
    make_embedder(**onnx_embedder.spec(), device="cpu")
    assert [p.stat().st_mtime_ns for p in cache_dir("onnx").glob("*.onnx")] == [stamp]


def test_unknown_runtime_is_refused():
    with pytest.raises(ValueError, match="unknown runtime 'tensorrt'"):
        SentenceTransformerEmbedder(device="cpu", runtime="tensorrt")


def test_query_embedder_deployment_serves_a_torch_index_with_onnx(leads_root, embedder, onnx_embedder):
    from serve.retrieval.embedding import QueryEmbedder

    replica = QueryEmbedder.func_or_class(str(leads_root / "index"), device="cpu", runtime="onnx")
    assert replica.embedder.runtime == "onnx" and replica.describe()["fingerprint"] == embedder.fingerprint
    texts = questions(8)
    np.testing.assert_allclose(
        replica.embedder.embed_documents(texts), embedder.embed_documents(texts), atol=1e-5
    )


def test_auto_runtime_is_onnx_for_mean_pooled_models_on_the_cpu_only(onnx_embedder):
    from sentence_transformers import SentenceTransformer, models

    from sws.index.embedders.st import packaged_minilm_dir
    from sws.index.embedders.st_onnx import is_mean_pooled

    auto = SentenceTransformerEmbedder(device="cpu", runtime="auto")
    assert auto.runtime == "onnx" and auto.spec()["runtime"] == "onnx"
    texts = questions(4)
    np.testing.assert_allclose(auto.embed_documents(texts), onnx_embedder.embed_documents(texts), atol=1e-6)
    transformer = models.Transformer(str(packaged_minilm_dir()))
    cls = models.Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
    assert not is_mean_pooled(SentenceTransformer(modules=[transformer, cls], device="cpu"))
    assert is_mean_pooled(auto._model)


def test_auto_query_runtime_leaves_other_embedders_as_the_index_has_them(leads_root, tmp_path):
    """The serving default ("auto") is ONNX Runtime for a MiniLM index and the index's own embedder otherwise;
    an explicit "onnx" for an embedder it cannot run is refused."""
    from serve.retrieval.embedding import QueryEmbedder
    from sws.index import build_index
    from sws.index.embedders.hashing import HashingEmbedder

    minilm = QueryEmbedder.func_or_class(str(leads_root / "index"), device="cpu", runtime="auto")
    assert minilm.embedder.runtime == "onnx"
    build_index(
        leads_root / "corpus",
        tmp_path / "index",
        embedder=HashingEmbedder(dim=32),
        embed_options={"workers": 0},
    )
    hashing = QueryEmbedder.func_or_class(str(tmp_path / "index"), device="cpu", runtime="auto")
    assert isinstance(hashing.embedder, HashingEmbedder)
    with pytest.raises(ValueError, match="applies to sentence-transformers, not hashing"):
        QueryEmbedder.func_or_class(str(tmp_path / "index"), device="cpu", runtime="onnx")
