"""The builds a cluster job's output is compared with: the same stage in this process, without Ray."""

from __future__ import annotations

from pathlib import Path

from sws.config import load_config, to_dict
from sws.corpus.dump import plan_units
from sws.corpus.shard import CorpusShardBuilder

TABLES = ("chunks", "docs", "redirects")


def corpus_in_process(dump: Path, index: Path, out: Path, streams_per_shard: int) -> None:
    """The corpus shards of a multistream dump built one by one here, as the job's shards are planned."""
    plain = to_dict(load_config("local"))
    builder = CorpusShardBuilder.from_options(out, plain["clean"], plain["chunk"])
    for i, unit in enumerate(plan_units([str(dump)], [str(index)], streams_per_shard)):
        builder.build(i, unit)


def assert_same_parts(built: Path, expected: Path, shards: int) -> None:
    """Every table has ``shards`` Parquet parts, each byte for byte the expected one."""
    for table in TABLES:
        parts = sorted(p.name for p in (built / table).glob("part-*.parquet"))
        assert len(parts) == shards, (table, parts)
        for name in parts:
            assert (built / table / name).read_bytes() == (expected / table / name).read_bytes(), name
