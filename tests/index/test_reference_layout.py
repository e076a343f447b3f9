"""``export_reference`` / ``sws index export --format reference``: the leads index in the reference's exact
layout, read back the way the reference's own code reads it (``search_kws.py``, ``search_vector.py``:
``tantivy.Index.open`` with no tokenizer registered, ``faiss.read_index``, ``ids.pkl``) and checked against
what sws serves from the index it came from."""

from __future__ import annotations

import json
import pickle
import pickletools

import numpy as np
import pytest
import tantivy
from click.testing import CliRunner

from sws.index import WikiIndex
from sws.index.reference import (
    CHUNKS_DIR,
    IDS_FILE,
    INDEX_FILE,
    METRICS,
    TITLES_DIR,
    check_chunk_ids,
    export_reference,
    read_ids_pkl,
)
from sws.index.reference.layout import builtin_tokenizer, faiss_dir

FAISS_DIR = faiss_dir(
    "all-MiniLM-L6-v2"
)  # the leads index's embedder: sentence-transformers/all-MiniLM-L6-v2
BOOSTS = {"doc_title": 2.0, "text": 1.0}


@pytest.fixture(scope="module")
def wiki(leads_root):
    return WikiIndex.open(leads_root / "index")


@pytest.fixture(scope="module")
def exported(leads_root, tmp_path_factory):
    """metric -> (export summary, directory): one export per metric."""
    root = tmp_path_factory.mktemp("reference")
    return {m: (export_reference(leads_root / "index", root / m, m), root / m) for m in METRICS}


@pytest.fixture(scope="module")
def ref(exported):
    return exported["ip"][1]


class ReferenceReader:
    """The reference's Tantivy reads (``WikiSearchClient`` of ``search_kws.py``), as it makes them."""

    def __init__(self, root):
        self.chunks = tantivy.Index.open(str(root / CHUNKS_DIR))
        self.titles = tantivy.Index.open(str(root / TITLES_DIR))

    def search(self, query: str, top_k: int) -> list[tuple[str, str, float]]:
        """``(doc_id, chunk_id, score)`` of the best chunk per page, as ``search`` dedups them."""
        q, _ = self.chunks.parse_query_lenient(query, ["text", "doc_title"], field_boosts=BOOSTS)
        searcher, best = self.chunks.searcher(), {}
        for score, addr in searcher.search(q, top_k * 3).hits:
            doc = searcher.doc(addr)
            doc_id = doc["doc_id"][0]
            if doc_id not in best or score > best[doc_id][2]:
                best[doc_id] = (doc_id, doc["chunk_id"][0], score)
        return sorted(best.values(), key=lambda hit: hit[2], reverse=True)[:top_k]

    def doc_title(self, doc_id: str) -> str | None:
        searcher = self.titles.searcher()
        hits = searcher.search(self.titles.parse_query(f'"{doc_id}"', ["doc_id"]), 1).hits
        return searcher.doc(hits[0][1])["doc_title"][0] if hits else None

    def all_chunks(self, doc_id: str) -> list[tuple[str, str]]:
        """``(chunk_id, text)`` of a page, sorted by the chunk id's suffix."""
        searcher = self.chunks.searcher()
        hits = searcher.search(self.chunks.parse_query(f'"{doc_id}"', ["doc_id"]), 1000).hits
        chunks = [(d["chunk_id"][0], d["text"][0]) for d in (searcher.doc(a) for _, a in hits)]
        return sorted(chunks, key=lambda c: int(c[0].split("_")[-1]))

    def search_title(self, title: str, top_k: int) -> list[str]:
        searcher = self.titles.searcher()
        hits = searcher.search(self.titles.parse_query(title, ["doc_title"]), top_k).hits
        return [searcher.doc(a)["doc_id"][0] for _, a in hits]


def _pages(wiki) -> list[tuple[int, str, int]]:
    """``(page_id, title, n_chunks)`` of every page, from the sws index."""
    chunks = [wiki.keyword.chunk_at_row(row) for row in range(wiki.keyword.num_chunks)]
    return [(c.page_id, c.title, c.n_chunks) for c in chunks if c.chunk_index == 0]


def test_the_layout_is_the_references_and_nothing_is_left_beside_it(exported, wiki):
    for metric, (summary, out) in exported.items():
        assert sorted(p.name for p in out.iterdir()) == ["faiss", "tantivy"]
        assert sorted(p.name for p in (out / FAISS_DIR).iterdir()) == [IDS_FILE, INDEX_FILE]
        assert (out / CHUNKS_DIR / "meta.json").is_file() and (out / TITLES_DIR / "meta.json").is_file()
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []
        assert summary["chunks"] == wiki.keyword.num_chunks == 17 and summary["pages"] == 12
        assert (summary["faiss"], summary["metric"], summary["dim"]) == (str(FAISS_DIR), metric, 384)
        assert summary["fingerprint"] == wiki.fingerprint and summary["tokenizer"] == "default"


def test_the_tantivy_fields_are_the_ones_the_reference_reads(ref):
    def fields(path):
        schema = json.loads((path / "meta.json").read_text())["schema"]
        return {f["name"]: (f["options"]["stored"], f["options"]["indexing"]["tokenizer"]) for f in schema}

    raw, words = (True, "raw"), (True, "default")
    assert fields(ref / CHUNKS_DIR) == {"doc_id": raw, "doc_title": words, "text": words, "chunk_id": raw}
    assert fields(ref / TITLES_DIR) == {"doc_id": raw, "doc_title": words}


def test_every_page_reads_back_as_the_reference_opens_it(ref, wiki):
    reader = ReferenceReader(ref)
    pages = _pages(wiki)
    assert reader.titles.searcher().num_docs == len(pages)
    for page_id, title, n_chunks in pages:
        assert reader.doc_title(str(page_id)) == title
        expected = [(c.chunk_id, c.text) for c in wiki.keyword.page_chunks(page_id)]
        assert reader.all_chunks(str(page_id)) == expected and len(expected) == n_chunks
    assert reader.doc_title("101") is None and reader.all_chunks("10100") == []  # ids match exactly
    assert reader.doc_title("1010") == "Bitcoin"


def test_title_search_and_random_sampling_work_on_the_titles_index(ref, wiki):
    reader = ReferenceReader(ref)
    for page_id, title, _ in _pages(wiki):
        assert reader.search_title(title, 1) == [str(page_id)]
    everything = reader.titles.parse_query("*", ["doc_title"])  # the reference's /random
    assert reader.titles.searcher().search(everything, 1, offset=11).hits


@pytest.mark.parametrize(
    "query",
    [
        "bitcoin currency",
        "film director born",
        "Frozen",
        '"restriction enzyme"',
        "the",
        "Who is Javier Milei?",
    ],
)
def test_the_references_keyword_search_scores_chunks_as_sws_does(ref, wiki, query):
    """Same documents, tokenizer, boosts and BM25: the reference's lenient query over the export scores
    every chunk as sws's keyword search does over its own index (for queries without Tantivy operators, which
    sws deliberately escapes: README "Tools")."""
    theirs = ReferenceReader(ref).chunks
    q, _ = theirs.parse_query_lenient(query, ["text", "doc_title"], field_boosts=BOOSTS)
    searcher = theirs.searcher()
    scored = {searcher.doc(a)["chunk_id"][0]: s for s, a in searcher.search(q, 100).hits}
    hits = wiki.keyword.search(query, 100)
    ours = {c.chunk_id: h.score for h, c in zip(hits, wiki.keyword.chunks_of(hits))}
    assert scored == pytest.approx(ours, rel=1e-6) and scored


def test_the_references_deduped_search_returns_one_best_chunk_per_page(ref):
    hits = ReferenceReader(ref).search("bitcoin currency film", 5)
    assert hits[0][:2] == ("1010", "1010_1") and len({doc_id for doc_id, _, _ in hits}) == len(hits)


def _faiss(out):
    import faiss

    return faiss.read_index(str(out / FAISS_DIR / INDEX_FILE))  # as the reference reads it (no mmap)


def _sws_vectors(wiki) -> np.ndarray:
    return np.concatenate([shard.reconstruct_n(0, shard.ntotal) for _, shard in wiki.dense.shards])


@pytest.mark.parametrize("metric", METRICS)
def test_the_faiss_index_is_hnsw_fp16_over_the_sws_vectors_and_ids_pkl_maps_its_rows(exported, wiki, metric):
    import faiss

    out = exported[metric][1]
    index = _faiss(out)
    assert isinstance(index, faiss.IndexHNSWSQ)
    assert index.metric_type == {"ip": faiss.METRIC_INNER_PRODUCT, "l2": faiss.METRIC_L2}[metric]
    assert faiss.downcast_index(index.storage).sq.qtype == faiss.ScalarQuantizer.QT_fp16
    params = wiki.manifest["dense"]["params"]
    assert (index.hnsw.efSearch, index.hnsw.efConstruction) == (
        params["ef_search"],
        params["ef_construction"],
    )
    assert (index.ntotal, index.d) == (wiki.keyword.num_chunks, wiki.dense.dim)
    assert np.array_equal(index.reconstruct_n(0, index.ntotal), _sws_vectors(wiki))
    ids = read_ids_pkl(out / FAISS_DIR / IDS_FILE)
    assert ids == wiki.dense.all_chunk_ids().to_pylist()
    assert check_chunk_ids(ids, out / FAISS_DIR / IDS_FILE, rows=index.ntotal) == {"chunks": 17, "pages": 12}


def test_ids_pkl_is_a_plain_protocol_4_list_the_references_pickle_load_reads(ref, wiki):
    data = (ref / FAISS_DIR / IDS_FILE).read_bytes()
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    assert data[:2] == b"\x80\x04" and not ops & {"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "BUILD"}
    assert (
        pickle.loads(data) == wiki.dense.all_chunk_ids().to_pylist()
    )  # our own file: what the reference does


@pytest.mark.parametrize("metric", METRICS)
def test_the_references_vector_search_finds_the_exact_neighbours(exported, wiki, embedder, metric):
    """``search_vector.py``: normalised query, ``index.search(q, k)``, rows -> ``ids.pkl``. The inner-product
    export ranks as sws's own FAISS search does; the L2 one as exact L2 search over the same vectors."""
    import faiss

    out = exported[metric][1]
    index, ids = _faiss(out), read_ids_pkl(out / FAISS_DIR / IDS_FILE)
    exact = (faiss.IndexFlatIP if metric == "ip" else faiss.IndexFlatL2)(index.d)
    exact.add(_sws_vectors(wiki))
    for query in ("Who founded KickassTorrents?", "Which country does Javier Milei lead?", "dog breeds"):
        q = embedder.embed_queries([query])
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        _, rows = index.search(q, 10)
        theirs = [ids[r] for r in rows[0] if r >= 0]
        assert theirs == [ids[r] for r in exact.search(q, 10)[1][0]]
        if metric == "ip":
            assert theirs == wiki.dense.chunk_ids([row for row, _ in wiki.dense.search(q[0], 10)])


def test_an_export_is_refused_over_a_non_empty_directory_and_for_an_unknown_metric(leads_root, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="is not an empty directory"):
        export_reference(leads_root / "index", tmp_path / "taken")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    with pytest.raises(ValueError, match="metric='cosine'"):
        export_reference(leads_root / "index", tmp_path / "new", "cosine")
    assert not (tmp_path / "new").exists()


def test_only_tokenizers_with_a_tantivy_builtin_are_exportable():
    assert builtin_tokenizer("default") == "default" and builtin_tokenizer("en_stem") == "en_stem"
    with pytest.raises(ValueError, match="'default_ascii' has no Tantivy built-in"):
        builtin_tokenizer("default_ascii")
    with pytest.raises(ValueError, match="last path part"):
        faiss_dir("Qwen/Qwen3-Embedding-0.6B")
    assert str(faiss_dir("Qwen3-Embedding-0.6B")) == "faiss/hnsw-Qwen3-Embedding-0.6B-chunk-1536-fp16"


def test_sws_index_export_writes_the_layout_and_refuses_a_second_time_in_one_line(leads_root, tmp_path):
    from sws.cli import cli

    args = [
        "index",
        "export",
        str(leads_root / "index"),
        "--out",
        str(tmp_path / "ref"),
        "--format",
        "reference",
    ]
    result = CliRunner().invoke(cli, [*args, "--metric", "l2", "--model", "MiniLM"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["metric"], summary["faiss"]) == ("l2", str(faiss_dir("MiniLM")))
    assert read_ids_pkl(tmp_path / "ref" / faiss_dir("MiniLM") / IDS_FILE)
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 1 and again.output.count("\n") == 1 and "not an empty directory" in again.output
    missing = CliRunner().invoke(cli, args[:-2])
    assert missing.exit_code == 2 and "--format" in missing.output


def test_an_index_that_does_not_open_is_refused_in_one_line(tmp_path):
    from sws.cli import cli

    args = [
        "index",
        "export",
        str(tmp_path / "none"),
        "--out",
        str(tmp_path / "ref"),
        "--format",
        "reference",
    ]
    result = CliRunner().invoke(cli, args)
    assert (
        result.exit_code == 1
        and result.output.count("\n") == 1
        and "manifest.json is missing" in result.output
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_export_command_has_its_tables_options():
    from sws.cli import cli
    from sws.config import flags

    command = cli.commands["index"].commands["export"]
    assert [p.opts[0] for p in command.params if p.opts[0].startswith("--")] == [
        f.name for f in flags.EXPORT_INDEX
    ]
    assert all(not f.keys for f in flags.EXPORT_INDEX)  # all arguments of the stage: no config involved
