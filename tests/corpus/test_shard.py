"""One shard per real sample, without Ray: counts reconcile and the tables agree with each other."""

import json

import pyarrow.parquet as pq
import pytest

from sws.config import load_config, to_dict
from sws.corpus.dump import DumpUnit
from sws.corpus.shard import CorpusShardBuilder


@pytest.mark.parametrize("index", range(7))
def test_every_sample_reconciles(index, wiki_samples, tmp_path):
    path = wiki_samples[index]
    plain = to_dict(load_config())
    stats = CorpusShardBuilder.from_options(tmp_path, plain["clean"], plain["chunk"]).build(
        0, DumpUnit(str(path))
    )
    counts = stats["counts"]
    skipped = sum(v for k, v in counts.items() if k.startswith("skipped_"))
    assert stats["input_error"] is None
    assert (
        counts["pages"]
        == counts.get("articles", 0) + counts.get("redirects", 0) + counts.get("other_namespace", 0) + skipped
    )
    assert json.loads((tmp_path / "_stats" / "part-00000.json").read_text()) == stats
    docs = pq.read_table(tmp_path / "docs").to_pylist()
    chunks = pq.read_table(tmp_path / "chunks").to_pylist()
    assert len(docs) == counts.get("articles", 0) and len(chunks) == counts.get("chunks", 0)
    assert sum(c["n_tokens"] for c in chunks) == sum(d["n_tokens"] for d in docs) == counts.get("tokens", 0)
    assert pq.read_table(tmp_path / "redirects").num_rows == counts.get("redirects", 0)


def test_a_page_that_breaks_the_pipeline_is_a_counted_skip(tmp_path, wiki_samples, monkeypatch):
    path = next(p for p in wiki_samples if p.name == "wikipedia2vec_enwiki-pages-articles-sample.xml.bz2")
    plain = to_dict(load_config())
    builder = CorpusShardBuilder.from_options(tmp_path, plain["clean"], plain["chunk"])
    real_chunk = builder.chunker.chunk

    def chunk(doc):
        if doc.title == "Accessibility":
            raise RuntimeError("boom")
        return real_chunk(doc)

    monkeypatch.setattr(builder.chunker, "chunk", chunk)
    counts = builder.build(0, DumpUnit(str(path)))["counts"]
    assert counts["skipped_processing_error"] == 1 and counts["articles"] == 1
    assert counts["pages"] == counts["articles"] + counts["redirects"] + counts["skipped_processing_error"]
