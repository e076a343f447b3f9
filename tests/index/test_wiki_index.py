"""Building and opening an index: manifest, fingerprints, id sets, and clear errors on bad input."""

import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pytest

from sws.index import (
    ChunkIdMismatchError,
    CorpusError,
    EmbedderMismatchError,
    EmptyCorpusError,
    FaissIndexer,
    FingerprintMismatchError,
    IndexCorruptError,
    IndexMissingError,
    OpenAIEmbedder,
    WikiIndex,
    build_index,
)
from sws.index.dense.indexer import write_chunk_ids
from tests.index.helpers import lead_pages, write_corpus


def test_open_verifies_and_exposes_manifest(leads_root, embedder):
    index = WikiIndex.open(leads_root / "index", embedder=embedder)
    m = index.manifest
    assert m["corpus"]["chunks"] == 17 and m["keyword"]["pages"] == 12 and m["keyword"]["redirects"] == 4
    assert [s["rows"] for s in m["dense"]["shards"]] == [16, 1]
    assert m["embedder"]["fingerprint"] == embedder.fingerprint and m["embedder"]["dim"] == 384
    assert index.keyword.num_chunks == index.dense.ntotal == 17
    assert index.dense.chunk_ids(list(range(17))) == [
        f"{p['page_id']}_{i}" for p in lead_pages() for i in range(len(p["chunks"]))
    ]


def test_faiss_row_is_chunk_row(leads_root, embedder):
    index = WikiIndex.open(leads_root / "index", embedder=embedder)
    texts = [c for p in lead_pages() for c in p["chunks"]]
    vectors = embedder.embed_documents(texts)
    for row in (0, 7, 16):  # row 16 lives in the second shard
        assert index.dense.search(vectors[row], 1)[0][0] == row


def test_the_build_embedder_is_made_once_when_threads_ask_at_once(leads_root, embedder, monkeypatch):
    """Two model loads at once are not safe in transformers (it swaps ``PreTrainedModel.tie_weights`` for the
    process while it loads), and the service's threads all ask on their first vector search."""
    from sws.index import wiki_index

    made = []

    def slow_make(**spec):
        made.append(spec)
        time.sleep(0.2)  # every thread is waiting by now
        return embedder

    monkeypatch.setattr(wiki_index, "make_embedder", slow_make)
    index = WikiIndex.open(leads_root / "index")
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: index.embedder, range(4)))
    assert len(made) == 1 and all(e is embedder for e in got)


def test_faiss_shards_are_memory_mapped(index_copy, embedder):
    """Replicas share the vector codes through the page cache: every shard file is mapped, not copied in."""
    index = WikiIndex.open(index_copy, embedder=embedder)
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if line.rstrip().endswith(".faiss")}
    shards = {str((index_copy / "faiss" / s["file"]).resolve()) for s in index.manifest["dense"]["shards"]}
    assert shards <= mapped, f"not mapped: {sorted(shards - mapped)}"


def test_rebuild_reuses_finished_parts(leads_root, embedder, tmp_path):
    first = json.loads((leads_root / "index" / "manifest.json").read_text())
    again = build_index(
        leads_root / "corpus",
        leads_root / "index",
        embedder=embedder,
        dense=FaissIndexer(m=16, shard_rows=16),
        embed_options={"workers": 0, "rows_per_unit": 8},
    )
    assert again["fingerprint"] == first["fingerprint"] and again["files"] == first["files"]
    assert again["keyword"]["seconds"] == first["keyword"]["seconds"]  # reused, not rebuilt


def test_chunk_id_mismatch_is_a_clear_error(index_copy):
    path = index_copy / "faiss" / "chunk_ids.arrow"
    ids = pa.ipc.open_file(pa.memory_map(str(path))).read_all().column("chunk_id").to_pylist()
    original, ids[5] = ids[5], "9999_0"  # same length: the file size does not change
    write_chunk_ids(path, ids)
    with pytest.raises(
        ChunkIdMismatchError, match=rf"only in Tantivy e.g. \['{original}'\], only in FAISS e.g. \['9999_0'\]"
    ):
        WikiIndex.open(index_copy)


def test_manifest_fingerprint_mismatch(index_copy):
    manifest = json.loads((index_copy / "manifest.json").read_text())
    manifest["dense"]["params"]["m"] = 64
    (index_copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FingerprintMismatchError, match="does not match its corpus, embedder and parameters"):
        WikiIndex.open(index_copy)


@pytest.mark.parametrize(
    "damage, error, message",
    [
        (lambda p: (p / "manifest.json").unlink(), IndexMissingError, "manifest.json is missing"),
        (lambda p: (p / "manifest.json").write_text("{not json"), IndexCorruptError, "unreadable"),
        (lambda p: (p / "faiss" / "shard-00001.faiss").unlink(), IndexMissingError, "shard-00001.faiss"),
        (lambda p: _truncate(p / "faiss" / "shard-00000.faiss"), IndexCorruptError, "shard-00000.faiss has"),
        (
            lambda p: _scramble(p / "faiss" / "shard-00000.faiss"),
            IndexCorruptError,
            "cannot read FAISS index",
        ),
        (lambda p: _scramble(p / "faiss" / "chunk_ids.arrow"), IndexCorruptError, "cannot read chunk ids"),
        (
            lambda p: _scramble(p / "tantivy" / "chunks" / "meta.json"),
            IndexCorruptError,
            "cannot open Tantivy",
        ),
        (lambda p: shutil.rmtree(p / "tantivy" / "titles"), IndexMissingError, "titles"),
        (
            lambda p: _grow(min((p / "tantivy" / "chunks").glob("*.store"))),
            IndexCorruptError,
            r"\.store has \d+ bytes, the manifest says",
        ),
    ],
)
def test_missing_or_corrupt_files(index_copy, damage, error, message):
    damage(index_copy)
    with pytest.raises(error, match=message):
        WikiIndex.open(index_copy)


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-10])


def _grow(path):
    with open(path, "ab") as f:
        f.write(b"\0")


def _scramble(path):
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(b ^ 0x5A for b in data))


class _FakeEmbedder(OpenAIEmbedder):
    """An embedder that never calls out: fixed dimension, vectors of ones."""

    def _embed(self, texts):
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_embedder_mismatch(leads_root):
    with pytest.raises(EmbedderMismatchError, match="dimension 768, the FAISS index 384"):
        WikiIndex.open(leads_root / "index", embedder=_FakeEmbedder("all-MiniLM-L6-v2", dim=768))
    with pytest.raises(EmbedderMismatchError, match="not the one the index was built with"):
        WikiIndex.open(leads_root / "index", embedder=_FakeEmbedder("other-model", dim=384))
    same_space = _FakeEmbedder("sentence-transformers/all-MiniLM-L6-v2", dim=384)
    assert WikiIndex.open(leads_root / "index", embedder=same_space).embedder is same_space


def test_empty_and_missing_corpus(tmp_path, embedder):
    with pytest.raises(CorpusError, match="manifest.json is missing"):
        build_index(tmp_path / "nothing", tmp_path / "out", embedder=embedder)
    empty = write_corpus(tmp_path / "empty", [], redirects=[])
    with pytest.raises(EmptyCorpusError, match="has no chunks"):
        build_index(empty, tmp_path / "out", embedder=embedder)
    with pytest.raises(ValueError, match="not both or neither"):
        build_index(empty, tmp_path / "out")


def test_vectors_of_another_corpus_are_refused(leads_root, tmp_path):
    other = write_corpus(tmp_path / "other", lead_pages()[:3], fingerprint="other-v1")
    with pytest.raises(FingerprintMismatchError, match="do not match corpus"):
        build_index(other, tmp_path / "out", vectors_dir=leads_root / "index" / "vectors")
