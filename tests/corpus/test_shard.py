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
    stats = CorpusShardBuilder.from_options(tmp_path, plain["clean"], plain["chunk"]).build(0, DumpUnit(str(path)))
    counts = stats["counts"]
    skipped = sum(v for k, v in counts.items() if k.startswith("skipped_"))
    assert stats["input_error"] is None
    assert counts["pages"] == counts.get("articles", 0) + counts.get("redirects", 0) + counts.get("other_namespace", 0) + skipped
    assert json.loads((tmp_path / "_stats" / "part-00000.json").read_text()) == stats
    docs = pq.read_table(tmp_path / "docs").to_pylist()
    chunks = pq.read_table(tmp_path / "chunks").to_pylist()
    assert len(docs) == counts.get("articles", 0) and len(chunks) == counts.get("chunks", 0)
    assert sum(c["n_tokens"] for c in chunks) == sum(d["n_tokens"] for d in docs) == counts.get("tokens", 0)
    assert pq.read_table(tmp_path / "redirects").num_rows == counts.get("redirects", 0)
