"""Vector shards: aligned with chunk rows, resumable, refusing to mix runs; Ray Data gives the same vectors."""

import json

import numpy as np
import pytest

from sws.index import FingerprintMismatchError, VectorSet, embed_corpus
from sws.manifest import OtherArtefactError
from tests.index.helpers import LetterCountEmbedder, lead_pages, minilm, write_corpus

TEXTS = [c for p in lead_pages() for c in p["chunks"]]


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path / "corpus", lead_pages(), parts=3)


@pytest.fixture
def embedder():
    return LetterCountEmbedder()


def test_shards_align_with_chunk_rows(corpus, tmp_path, embedder):
    vectors = embed_corpus(corpus, tmp_path / "vec", embedder, workers=0, rows_per_unit=4, dtype="float32")
    assert vectors.rows == len(TEXTS) and vectors.dim == 16
    assert vectors.embedder_fingerprint == embedder.fingerprint and vectors.corpus_fingerprint == "leads-v1"
    assert [(u.part, u.start, u.stop) for u in vectors.units][:3] == [(0, 0, 4), (0, 4, 6), (1, 0, 4)]
    got = np.concatenate(list(vectors.iter_blocks()))
    np.testing.assert_allclose(got, embedder.embed_documents(TEXTS), atol=1e-5)
    assert vectors.manifest["tokens"] == sum(len(t.split()) for t in TEXTS)


def test_resume_keeps_finished_units_and_refuses_other_runs(corpus, tmp_path, embedder):
    out = tmp_path / "vec"
    first = embed_corpus(corpus, out, embedder, workers=0, rows_per_unit=4)
    stamps = {u.name: u.npy(out).stat().st_mtime_ns for u in first.units}
    redo = first.units[2]
    redo.stats(out).unlink()  # an interrupted unit: its done marker is missing
    again = embed_corpus(corpus, out, embedder, workers=0, rows_per_unit=4)
    assert again.manifest["last_run"] == {
        "units": 1,
        "resumed_units": len(first.units) - 1,
        "wall_s": pytest.approx(0, abs=5),
    }
    assert all(u.npy(out).stat().st_mtime_ns == stamps[u.name] for u in again.units if u != redo)
    assert again.fingerprint == first.fingerprint
    with pytest.raises(FingerprintMismatchError, match="holds vectors of another run"):
        embed_corpus(corpus, out, embedder, workers=0, rows_per_unit=8)
    with pytest.raises(FingerprintMismatchError, match="holds vectors of another run"):
        embed_corpus(corpus, out, embedder, workers=0, rows_per_unit=4, dtype="float32")


def test_an_out_holding_another_artefact_is_refused_before_anything_is_written(corpus, embedder):
    before = sorted(corpus.rglob("*"))
    with pytest.raises(
        OtherArtefactError, match=f"{corpus} holds an sws-corpus manifest, not an sws-vectors/1"
    ):
        embed_corpus(corpus, corpus, embedder, workers=0)
    assert sorted(corpus.rglob("*")) == before


def test_opening_unfinished_or_damaged_vectors(corpus, tmp_path, embedder):
    from sws.index import IndexCorruptError, IndexMissingError

    out = tmp_path / "vec"
    with pytest.raises(IndexMissingError, match="manifest.json is missing"):
        VectorSet.open(out)
    vectors = embed_corpus(corpus, out, embedder, workers=0, rows_per_unit=4)
    good = np.load(vectors.units[0].npy(out))
    np.save(vectors.units[0].npy(out), good[:3])
    with pytest.raises(IndexCorruptError, match="has shape \\(3, 16\\), expected \\(4, 16\\)"):
        VectorSet.open(out)
    np.save(vectors.units[0].npy(out), good)
    vectors.units[1].npy(out).unlink()
    with pytest.raises(IndexMissingError, match="vector shard missing: .*part-00000-000000004.npy"):
        VectorSet.open(out)


@pytest.mark.ray
def test_ray_data_actor_pool_gives_the_same_shards(corpus, tmp_path, ray_local):
    local = embed_corpus(corpus, tmp_path / "local", minilm(), workers=0, rows_per_unit=6)
    remote = embed_corpus(corpus, tmp_path / "ray", minilm().spec(), workers=1, num_cpus=1, rows_per_unit=6)
    assert remote.fingerprint == local.fingerprint
    assert json.loads((tmp_path / "ray" / "job.json").read_text()) == json.loads(
        (tmp_path / "local" / "job.json").read_text()
    )
    for a, b in zip(local.iter_blocks(), remote.iter_blocks()):
        np.testing.assert_allclose(a, b, atol=2e-3)


@pytest.mark.parametrize(
    ("options", "message"), [({"workers": -1}, "-1 and None"), ({"threads": -2}, "1 and -2")]
)
def test_negative_workers_or_threads_are_refused_before_anything_is_written(
    corpus, tmp_path, embedder, options, message
):
    with pytest.raises(ValueError, match=f"workers and threads must be >= 0, got {message}"):
        embed_corpus(corpus, tmp_path / "vectors", embedder, **options)
    assert not (tmp_path / "vectors").exists()
