"""Reading the corpus layout: order, row-group slicing and clear errors."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sws.index import CorpusError, CorpusFiles, EmptyCorpusError
from tests.index.helpers import lead_pages, write_corpus


def test_parts_in_name_order_and_row_slices(tmp_path):
    corpus = CorpusFiles.open(write_corpus(tmp_path, lead_pages(), parts=3))
    assert [p.name for p in corpus.chunk_parts] == [
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
    ]
    assert corpus.num_chunks == 17 and corpus.part_rows == (6, 6, 5) and corpus.fingerprint == "leads-v1"
    ids = [i for b in corpus.iter_chunks(["chunk_id"]) for i in b.column(0).to_pylist()]
    assert ids[:4] == ["1000_0", "1000_1", "1000_2", "1010_0"]
    for start, stop in [(0, 6), (3, 5), (4, 5), (5, 6)]:  # row groups hold 4 rows
        assert corpus.read_chunk_rows(0, start, stop, ["chunk_id"]).column(0).to_pylist() == ids[start:stop]
    assert sum(b.num_rows for b in corpus.iter_redirects()) == 5


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(CorpusError, match="manifest.json is missing"):
        CorpusFiles.open(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "sws-corpus"}))
    with pytest.raises(CorpusError, match="no readable 'fingerprint'"):
        CorpusFiles.open(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"fingerprint": "x"}))
    with pytest.raises(CorpusError, match="no chunks/part-\\*.parquet"):
        CorpusFiles.open(tmp_path)
    (tmp_path / "chunks").mkdir()
    pq.write_table(pa.table({"chunk_id": ["1_0"]}), tmp_path / "chunks" / "part-00000.parquet")
    with pytest.raises(CorpusError, match="lacks columns \\['page_id'"):
        CorpusFiles.open(tmp_path)
    (tmp_path / "chunks" / "part-00000.parquet").write_bytes(b"not parquet")
    with pytest.raises(CorpusError, match="unreadable corpus file"):
        CorpusFiles.open(tmp_path)


def test_empty_corpus(tmp_path):
    with pytest.raises(EmptyCorpusError, match="has no chunks \\(2 empty part files\\)"):
        CorpusFiles.open(write_corpus(tmp_path, [], redirects=[]))
