"""The exported runtimes of the packaged MiniLM: exported locally once; ONNX Runtime gives the same vectors and
search results, OpenVINO (bf16 on this kind of CPU) passes the agreement gate and ranks alike on the six QA sets'
questions; "auto" picks by the hardware and passes over a runtime that fails the gate."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sws.cache import cache_dir
from sws.index import WikiIndex
from sws.index.embedders import SentenceTransformerEmbedder, make_embedder, precision
from tests.benchmarks.conftest import bench_module
from tests.index.helpers import lead_pages

QA = Path(__file__).parents[1] / "data" / "qa"
QUESTIONS = QA / "hotpotqa_test_questions_and_answers.json"


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory):
    """One ONNX MiniLM for the module, its export in a module-private cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWS_CACHE", str(tmp_path_factory.mktemp("onnx-cache")))
        yield SentenceTransformerEmbedder(device="cpu", runtime="onnx")


@pytest.fixture(scope="module")
def openvino_embedder(onnx_embedder):
    """OpenVINO MiniLM (after the ONNX one: it reads the same export)."""
    return SentenceTransformerEmbedder(device="cpu", runtime="openvino")


def questions(n: int = 64) -> list[str]:
    return [row["question"] for row in json.loads(QUESTIONS.read_text())[:n]]


def six_sets_questions(per_set: int = 40) -> list[str]:
    """``per_set`` questions of each of the six QA sets, interleaved (the benchmarks' query set)."""
    return bench_module("serve_common").agent_queries("questions", 6 * per_set)


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
    exported = list(cache_dir("onnx").glob("*/model.onnx"))
    assert len(exported) == 1
    stamp = exported[0].stat().st_mtime_ns
    make_embedder(**onnx_embedder.spec(), device="cpu")
    assert [p.stat().st_mtime_ns for p in cache_dir("onnx").glob("*/model.onnx")] == [stamp]


LIGHT_OPEN = """
import json, sys
from sws.index.embedders import SentenceTransformerEmbedder
embedder = SentenceTransformerEmbedder(device="cpu", runtime=sys.argv[1])
rows = embedder.embed_documents(json.loads(sys.argv[2]))
heavy = [name for name in ("torch", "transformers", "sentence_transformers", "sklearn") if name in sys.modules]
print(json.dumps({"info": embedder.runtime_info(), "dim": embedder.dim, "heavy": heavy, "rows": rows.tolist()}))
"""


@pytest.mark.parametrize("runtime", ["auto", "onnx"])
def test_a_cached_export_opens_without_pytorch_and_gives_the_same_vectors(runtime):
    """A replica's start: the export in the cache is all an exported runtime reads (no PyTorch, transformers
    or sentence-transformers import); vectors and the gate's cosine as from the loaded model."""
    texts = questions(5) + [lead_pages()[0]["chunks"][0]]
    loaded = SentenceTransformerEmbedder(runtime=runtime)  # device None: the PyTorch model is loaded
    assert loaded._model is not None
    out = subprocess.run(
        [sys.executable, "-c", LIGHT_OPEN, runtime, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
    )
    light = json.loads(out.stdout)
    assert light["heavy"] == [] and light["dim"] == loaded.dim == 384
    assert light["info"] == loaded.runtime_info()
    assert np.array_equal(np.asarray(light["rows"], dtype=np.float32), loaded.embed_documents(texts))


def test_the_exported_tokenizer_gives_the_models_ids(embedder, onnx_embedder):
    """The export's tokenizer (``tokenizers`` alone) against transformers' on questions and long passages."""
    chunks = [c for p in lead_pages() for c in p["chunks"]]
    texts = six_sets_questions(10) + chunks + [" ".join(chunks)]
    expected = embedder._model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert onnx_embedder._encoder.token_ids(texts) == expected
    assert max(len(row) for row in expected) == 256  # some were truncated


def test_a_damaged_or_stale_export_is_made_again(tmp_path, monkeypatch):
    """A truncated ONNX file or an unreadable reference is written again; a changed model folder has an export
    of its own; a reference whose token ids are not the tokenizer's is refused by name."""
    import shutil

    from sws.index.embedders.st import packaged_minilm_dir
    from sws.index.embedders.st_exported import export_dir

    monkeypatch.setenv("SWS_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "minilm"
    shutil.copytree(packaged_minilm_dir(), model)
    first = SentenceTransformerEmbedder(str(model), device="cpu", runtime="onnx").embed_documents(["x y"])
    folder = export_dir(str(model))
    whole = (folder / "model.onnx").read_bytes()
    (folder / "model.onnx").write_bytes(whole[: len(whole) // 2])
    (folder / "reference-256.json").write_text("{")
    again = SentenceTransformerEmbedder(str(model), device="cpu", runtime="onnx")
    assert again._model is not None and (folder / "model.onnx").read_bytes() == whole
    assert np.array_equal(again.embed_documents(["x y"]), first)
    saved = json.loads((folder / "reference-256.json").read_text())
    saved["ids"][0][1] += 1
    (folder / "reference-256.json").write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="the exported tokenizer's ids differ from the model's"):
        SentenceTransformerEmbedder(str(model), device="cpu", runtime="onnx")
    (model / "config.json").write_text((model / "config.json").read_text() + "\n")
    assert export_dir(str(model)) != folder


def test_bf16_units_are_read_from_the_kernels_flags_as_pytorch_reads_them():
    import torch

    assert precision.cpu_has_bf16() == bool(
        torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    )


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


def test_openvino_agrees_with_fp32_on_the_six_sets_and_ranks_alike(leads_root, embedder, openvino_embedder):
    """The issue's gate: cosine >= 0.999 to the fp32 vectors, recall@10 of the rankings >= 0.99."""
    assert openvino_embedder.fingerprint == embedder.fingerprint
    info = openvino_embedder.runtime_info()
    assert info["precision"] == ("bf16" if precision.cpu_has_bf16() else "fp32")
    assert info["min_cosine_to_fp32"] >= precision.MIN_COSINE
    texts = six_sets_questions()
    chunks = [c for p in lead_pages() for c in p["chunks"]]
    for rows, reference in (
        (openvino_embedder.embed_queries(texts), embedder.embed_queries(texts)),
        (openvino_embedder.embed_documents(chunks), embedder.embed_documents(chunks)),
    ):
        assert precision.min_cosine(rows, reference) >= precision.MIN_COSINE
    index = WikiIndex.open(leads_root / "index", embedder=openvino_embedder)
    found = total = 0
    for fast, fp32 in zip(openvino_embedder.embed_queries(texts), embedder.embed_queries(texts), strict=True):
        expected = {row for row, _ in index.dense.search(fp32, 10)}
        found += len(expected & {row for row, _ in index.dense.search(fast, 10)})
        total += len(expected)
    assert found / total >= 0.99, found / total


def test_a_texts_vector_does_not_depend_on_its_batch(openvino_embedder, onnx_embedder):
    """Served queries are batched with whatever else arrives: the same query must give the same bytes."""
    texts = six_sets_questions(6)
    for encoder in (openvino_embedder, onnx_embedder):
        alone = np.concatenate([encoder.embed_documents([t]) for t in texts])
        assert np.array_equal(alone, encoder.embed_documents(texts))
        assert np.array_equal(alone[::-1], encoder.embed_documents(texts[::-1]))


def test_each_text_is_padded_to_a_width_of_its_own_not_to_its_batchs_longest(
    openvino_embedder, onnx_embedder
):
    """A batch runs as groups of one width each, longest first: ONNX Runtime's the next multiple of 8 (padding
    16 questions to the longest of them cost more than batching saved), OpenVINO's the next power of two."""
    lengths = [5, 17, 9, 30, 8]
    assert onnx_embedder._encoder._groups(lengths) == [([3], 32), ([1], 24), ([2], 16), ([4, 0], 8)]
    assert openvino_embedder._encoder._groups(lengths) == [([3, 1], 32), ([2, 4, 0], 16)]


def test_onnx_pool_threads_sleep_when_idle(onnx_embedder):
    """A query replica shares its cores with the ingress: spinning pool threads took the CPU it needed."""
    options = onnx_embedder._encoder._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_auto_picks_by_the_hardware_and_passes_over_a_runtime_below_the_gate(monkeypatch, caplog):
    fast = "openvino" if precision.cpu_has_bf16() else "onnx"
    auto = SentenceTransformerEmbedder(device="cpu", runtime="auto")
    assert auto.runtime == fast and auto.spec()["runtime"] == fast
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert SentenceTransformerEmbedder(device="cpu", runtime="auto").runtime == "onnx"
    monkeypatch.undo()
    if not precision.cpu_has_bf16():
        return  # no reduced precision here to fail the gate: ONNX Runtime's fp32 passes any
    monkeypatch.setattr(precision, "MIN_COSINE", 0.9999999)  # above bf16's agreement, below fp32's
    with caplog.at_level(logging.WARNING):
        assert SentenceTransformerEmbedder(device="cpu", runtime="auto").runtime == "onnx"
    assert "runtime 'auto' passes over 'openvino': runtime 'openvino': least cosine" in caplog.text
    with pytest.raises(precision.RuntimeQualityError, match="below 0.9999999"):
        SentenceTransformerEmbedder(device="cpu", runtime="openvino")


def test_auto_runtime_is_exported_for_mean_pooled_models_only(tmp_path):
    from sentence_transformers import SentenceTransformer, models

    from sws.index.embedders.st import packaged_minilm_dir
    from sws.index.embedders.st_exported import is_mean_pooled

    transformer = models.Transformer(str(packaged_minilm_dir()))
    cls = models.Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
    cls_pooled = SentenceTransformer(modules=[transformer, cls], device="cpu")
    assert not is_mean_pooled(cls_pooled)
    cls_pooled.save(str(tmp_path / "cls-pooled"))
    assert (
        SentenceTransformerEmbedder(str(tmp_path / "cls-pooled"), device="cpu", runtime="auto").runtime
        == "torch"
    )
    assert is_mean_pooled(SentenceTransformerEmbedder(device="cpu")._model)


def test_auto_query_runtime_leaves_other_embedders_as_the_index_has_them(leads_root, tmp_path):
    """The serving default ("auto") is an exported runtime for a MiniLM index, said by ``describe``, and the
    index's own embedder for one without runtimes; an explicit "onnx" for it is refused."""
    from serve.retrieval.embedding import QueryEmbedder
    from sws.index import build_index
    from sws.index.embedders.hashing import HashingEmbedder

    minilm = QueryEmbedder.func_or_class(str(leads_root / "index"), device="cpu", runtime="auto")
    described = minilm.describe()
    assert described["runtime"] == ("openvino" if precision.cpu_has_bf16() else "onnx")
    assert described["min_cosine_to_fp32"] >= precision.MIN_COSINE and described["device"] == "cpu"
    build_index(
        leads_root / "corpus",
        tmp_path / "index",
        embedder=HashingEmbedder(dim=32),
        embed_options={"workers": 0},
    )
    hashing = QueryEmbedder.func_or_class(str(tmp_path / "index"), device="cpu", runtime="auto")
    assert isinstance(hashing.embedder, HashingEmbedder) and hashing.describe()["runtime"] == "hashing"
    with pytest.raises(ValueError, match="applies to sentence-transformers and qwen3, not hashing"):
        QueryEmbedder.func_or_class(str(tmp_path / "index"), device="cpu", runtime="onnx")
