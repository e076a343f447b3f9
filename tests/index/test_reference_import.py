"""``import_reference`` / ``sws index import``: the leads index exported in the reference's layout is adopted
as an sws index (files hard-linked, a manifest and the chunk keys beside them) that ``sws search``, ``sws
open`` and ``sws index verify`` open as any index; a source sws cannot read is refused in one line, and
nothing is written."""

from __future__ import annotations

import errno
import json
import os
import pickle
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.index import EmbedderMismatchError, IndexCorruptError, WikiIndex, verify_index
from sws.index.embedders import QWEN3_QUERY_TASK
from sws.index.embedders.base import space_fingerprint
from sws.index.manifest import MANIFEST
from sws.index.reference import IDS_FILE, INDEX_FILE, REFERENCE_EMBEDDER, export_reference, import_reference
from sws.index.reference.ids import IdsFileError
from sws.index.reference.keys import KEYS_FILE, ChunkKeys, keys_of, write_keys

FAISS_DIR = "faiss/hnsw-all-MiniLM-L6-v2-chunk-1536-fp16"


@pytest.fixture(scope="module")
def spec(leads_root):
    return WikiIndex.open(leads_root / "index", check_ids=False).manifest["embedder"]["spec"]


@pytest.fixture(scope="module")
def exported(leads_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("exported")
    export_reference(leads_root / "index", root / "reference")
    return root / "reference"


@pytest.fixture
def source(exported, tmp_path):
    """A private copy of the export that a test may damage."""
    shutil.copytree(exported, tmp_path / "reference")
    return tmp_path / "reference"


def _import(*args):
    return CliRunner().invoke(cli, ["index", "import", *map(str, args)])


def test_the_import_links_the_files_and_describes_them_in_a_manifest(source, tmp_path, spec):
    manifest = import_reference(source, tmp_path / "idx", embedder=spec)
    idx = tmp_path / "idx"
    assert sorted(p.name for p in idx.iterdir()) == sorted([KEYS_FILE, MANIFEST, "faiss", "tantivy"])
    for rel in manifest["files"]:
        if rel != KEYS_FILE:  # adopted in place: the same file, not a copy
            assert os.stat(idx / rel).st_ino == os.stat(source / rel).st_ino, rel
    assert (manifest["layout"], manifest["corpus"]["chunks"], manifest["corpus"]["pages"]) == (
        "reference",
        17,
        12,
    )
    assert manifest["dense"]["params"] == {
        "type": "IndexHNSWSQ/fp16/ip",
        "metric": "ip",
        "m": 16,
        "ef_search": 128,
        "ef_construction": 200,
        "dim": 384,
    }
    assert manifest["dense"]["dir"] == FAISS_DIR
    assert manifest["keyword"]["params"]["tokenizer"] == "default"
    assert manifest["keyword"]["params"]["fields"]["chunks"] == {
        "doc_id": "raw",
        "doc_title": "default",
        "text": "default",
        "chunk_id": "raw",
    }
    assert (manifest["keyword"]["chunks"], manifest["keyword"]["pages"]) == (17, 12)
    assert manifest["embedder"] == {"spec": spec, "fingerprint": "000aa88254f05d56", "dim": 384}
    assert (
        set(manifest["checksums"]["files"]) == set(manifest["files"])
        and f"{FAISS_DIR}/{IDS_FILE}" in manifest["files"]
    )
    assert verify_index(idx)["files"] == len(manifest["files"])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    again = import_reference(source, tmp_path / "idx2", embedder=spec)  # the content's fingerprint: the same
    assert again["fingerprint"] == manifest["fingerprint"]


def test_the_default_query_embedder_is_the_references(source, tmp_path, embedder):
    manifest = import_reference(source, tmp_path / "idx")
    assert manifest["embedder"] == {
        "spec": REFERENCE_EMBEDDER,
        "fingerprint": space_fingerprint("Qwen/Qwen3-Embedding-0.6B", 384, QWEN3_QUERY_TASK),
        "dim": 384,
    }
    assert REFERENCE_EMBEDDER["query_task"] == (
        "Given a web search query, retrieve relevant passages that answer the query"
    )
    index = WikiIndex.open(tmp_path / "idx")  # no model loaded until a query is embedded
    assert index.keyword.num_chunks == 17
    with pytest.raises(EmbedderMismatchError, match="not the one the index was built with"):
        WikiIndex.open(tmp_path / "idx", embedder=embedder)


def test_sws_search_and_open_answer_over_the_import_as_over_the_native_index(
    source, tmp_path, spec, leads_root
):
    result = _import(source, "--out", tmp_path / "idx", "--embedder-spec", json.dumps(spec))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["layout"], summary["chunks"], summary["faiss"]["metric"]) == ("reference", 17, "ip")
    runner = CliRunner()
    for args in (
        ["search", "Who founded KickassTorrents?", "--method", "rrf", "--top-k", "5"],
        ["search", "Who founded KickassTorrents?", "--method", "vector"],
        ["search", "bitcoin currency", "--method", "keywords"],
        ["search", "bitcoin", "--only-title"],
        ["open", "https://en.wikipedia.org/wiki/1010#chunk-2"],
        ["open", "https://en.wikipedia.org/wiki/Rat_Terrier"],
    ):
        ours = runner.invoke(cli, [*args, "--index", str(tmp_path / "idx")])
        native = runner.invoke(cli, [*args, "--index", str(leads_root / "index")])
        assert ours.exit_code == native.exit_code == 0 and ours.stdout == native.stdout, args
    verified = runner.invoke(cli, ["index", "verify", str(tmp_path / "idx")])
    assert verified.exit_code == 0 and json.loads(verified.output)["status"] == "ok"


def test_copy_copies_and_the_source_folder_itself_can_adopt_the_index(source, tmp_path, spec):
    import_reference(source, tmp_path / "copied", embedder=spec, copy=True)
    rel = f"{FAISS_DIR}/{INDEX_FILE}"
    assert os.stat(tmp_path / "copied" / rel).st_ino != os.stat(source / rel).st_ino
    import_reference(source, source, embedder=spec)
    assert (source / MANIFEST).is_file() and WikiIndex.open(source).dense.ntotal == 17


def test_a_hard_link_across_filesystems_is_refused_suggesting_copy(source, tmp_path, monkeypatch):
    def cross_device(src, dst):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "link", cross_device)
    result = _import(source, "--out", tmp_path / "idx")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "--copy" in result.output and "same filesystem" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference"]


def _faiss(index):
    import faiss

    return faiss.read_index(str(index))


def _write_faiss(path, index):
    import faiss

    faiss.write_index(index, str(path))


def _extra_row(source):
    """One more vector and id in FAISS and ``ids.pkl`` than Tantivy has chunk documents."""
    index = _faiss(source / FAISS_DIR / INDEX_FILE)
    index.add(index.reconstruct_n(0, 1))
    _write_faiss(source / FAISS_DIR / INDEX_FILE, index)
    ids = pickle.loads((source / FAISS_DIR / IDS_FILE).read_bytes())
    (source / FAISS_DIR / IDS_FILE).write_bytes(pickle.dumps([*ids, "99999_0"], protocol=4))


def _flat(source):
    import faiss

    index = _faiss(source / FAISS_DIR / INDEX_FILE)
    flat = faiss.IndexFlatIP(index.d)
    flat.add(index.reconstruct_n(0, index.ntotal))
    _write_faiss(source / FAISS_DIR / INDEX_FILE, flat)


def _ids(source, ids=None, data=None):
    if data is None:
        data = pickle.dumps(ids, protocol=4)
    (source / FAISS_DIR / IDS_FILE).write_bytes(data)


def _whitespace(source):
    """Text fields tokenized by a Tantivy built-in sws has no query analyzer for."""
    for part in ("chunks", "titles"):
        meta = source / "tantivy/chunk-1536" / part / "meta.json"
        meta.write_text(meta.read_text().replace('"default"', '"whitespace"'))


MARKER = "/tmp/sws-import-should-not-exist"
DAMAGE = {
    "os.system": (
        lambda s: _ids(s, data=f"cos\nsystem\n(S'touch {MARKER}'\ntR.".encode()),
        "names the global os.system",
    ),
    "fewer ids": (
        lambda s: _ids(s, [f"{i}_0" for i in range(16)]),
        "holds 16 chunk ids for 17 rows",
    ),
    "more rows than chunks": (_extra_row, "holds 18 chunk ids"),
    "not hnsw": (_flat, "is IndexFlatIP: sws reads only the HNSW family"),
    "gap": (lambda s: _ids(s, [f"{1000 + i}_{i % 2}" for i in range(17)]), "each page's ids must be"),
    "leading zero": (
        lambda s: _ids(s, [f"0{1000 + i}_0" for i in range(17)]),
        "a page id with a leading zero",
    ),
    "no titles": (lambda s: shutil.rmtree(s / "tantivy/chunk-1536/titles"), "titles/ is missing"),
    "tokenizer": (_whitespace, "tokenized with 'whitespace'"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_source_sws_cannot_read_is_refused_in_one_line_and_nothing_is_written(source, tmp_path, damage):
    spoil, message = DAMAGE[damage]
    spoil(source)
    result = _import(source, "--out", tmp_path / "idx")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert message in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference"] and not (source / MANIFEST).exists()
    assert not os.path.exists(MARKER)


def test_a_non_empty_output_or_a_bad_embedder_spec_is_refused(source, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    taken = _import(source, "--out", tmp_path / "taken")
    assert taken.exit_code == 1 and "not an empty directory" in taken.output
    bad = _import(source, "--out", tmp_path / "idx", "--embedder-spec", "{not json")
    assert bad.exit_code == 2 and "--embedder-spec is not JSON" in bad.output
    kindless = _import(source, "--out", tmp_path / "idx", "--embedder-spec", '{"model": "m"}')
    assert kindless.exit_code == 2 and '"kind" and "model"' in kindless.output
    unknown = _import(source, "--out", tmp_path / "idx", "--embedder-spec", '{"kind": "k", "model": "m"}')
    assert unknown.exit_code == 2 and "unknown kind 'k'" in unknown.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference", "taken"]


def test_chunk_keys_map_rows_ids_and_pages_compactly(tmp_path):
    ids = ["1010_1", "7_0", "1010_0", "53219662_0"]
    write_keys(tmp_path / KEYS_FILE, keys_of(ids, "ids.pkl"))
    keys = ChunkKeys(tmp_path / KEYS_FILE)
    assert keys.chunk_ids([0, 1, 2, 3]) == ids and keys.all_chunk_ids().to_pylist() == ids
    assert keys.rows(["1010_0", "7_0", "7_1", "07_0", "x", "", "1010_00"]) == [
        2,
        1,
        None,
        None,
        None,
        None,
        None,
    ]
    assert [keys.n_chunks(p) for p in (1010, 7, 8, 0, -1, 2**60)] == [2, 1, 0, 0, 0, 0]
    assert np.load(tmp_path / KEYS_FILE).dtype == np.int64
    with pytest.raises(IdsFileError, match="a page id of 2\\*\\*43 or more"):
        keys_of(["99999999999999_0"], "ids.pkl")
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    with pytest.raises(IndexCorruptError, match="cannot read chunk keys"):
        ChunkKeys(tmp_path / "bad.npy")


def test_hnsw_params_read_the_file_and_refuse_metrics_sws_cannot_rank(tmp_path):
    import faiss

    from sws.index.reference.dense import hnsw_params

    flat = faiss.IndexHNSWFlat(8, 12, faiss.METRIC_L2)
    flat.hnsw.efSearch = 40
    assert hnsw_params(flat, tmp_path) == {
        "type": "IndexHNSWFlat/IndexFlatL2/l2",
        "metric": "l2",
        "m": 12,
        "ef_search": 40,
        "ef_construction": 40,
        "dim": 8,
    }
    with pytest.raises(IndexCorruptError, match="only inner product and L2"):
        hnsw_params(faiss.IndexHNSWFlat(8, 12, faiss.METRIC_L1), tmp_path)


def test_a_failed_import_in_place_leaves_the_source_as_it_was(source, spec, monkeypatch):
    def disk_full(*_):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    files = sorted(p.relative_to(source) for p in source.rglob("*"))
    with monkeypatch.context() as patch:
        patch.setattr("sws.index.reference.adopt.write_json", disk_full)
        with pytest.raises(OSError):
            import_reference(source, source, embedder=spec)
    assert sorted(p.relative_to(source) for p in source.rglob("*")) == files  # no keys left behind
    import_reference(source, source, embedder=spec)
    imported = sorted(p.relative_to(source) for p in source.rglob("*"))
    monkeypatch.setattr("sws.index.reference.adopt.write_json", disk_full)
    with pytest.raises(OSError):
        import_reference(source, source, embedder=spec)
    assert sorted(p.relative_to(source) for p in source.rglob("*")) == imported
    assert WikiIndex.open(source).dense.ntotal == 17  # the earlier import still opens


def test_equal_scores_keep_faiss_order_as_the_reference_does(tmp_path):
    """Chunks whose first 256 word pieces are the same get one MiniLM vector: the reference lists them as FAISS
    returns them, and so does sws over its files (its own shards rank them by row)."""
    import faiss

    from sws.index.reference.dense import ReferenceFaissSearcher

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors[::10] = vectors[0]  # 30 rows with one vector
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = faiss.IndexHNSWFlat(16, 8, faiss.METRIC_INNER_PRODUCT)
    index.add(vectors)
    faiss.write_index(index, str(tmp_path / INDEX_FILE))
    write_keys(tmp_path / KEYS_FILE, keys_of([f"{page}_0" for page in range(1, 301)], "ids.pkl"))
    searcher = ReferenceFaissSearcher(tmp_path / INDEX_FILE, ChunkKeys(tmp_path / KEYS_FILE))
    _, faiss_rows = index.search(vectors[:1], 20)
    rows = [row for row, _ in searcher.search(vectors[0], 20)]
    assert rows == faiss_rows[0].tolist() and set(rows) <= set(range(0, 300, 10))
    assert rows != sorted(rows)  # FAISS's order is not the rows' (else this test could not fail)
