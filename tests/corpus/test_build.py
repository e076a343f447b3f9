"""The corpus build on local Ray: reconciled counts, determinism, multistream parallelism, resume, bad input."""

import bz2
import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.config import load_config, to_dict
from sws.corpus.build import CorpusBuildError, build_corpus
from sws.corpus.multistream import pack_multistream
from tests.conftest import SAMPLE
from tests.corpus.helpers import dump_xml, page_xml

pytestmark = pytest.mark.usefixtures("ray_local")


def _build(dumps, out, index_paths=(), **overrides):
    plain = to_dict(load_config("local", [f"{k}={v}" for k, v in overrides.items()]))
    return build_corpus(
        [str(d) for d in dumps],
        out,
        clean=plain["clean"],
        chunk=plain["chunk"],
        index_paths=[str(i) for i in index_paths],
        streams_per_shard=2,
        progress=False,
    )


@pytest.fixture(scope="module")
def sample_corpus(tmp_path_factory, ray_local):
    out = tmp_path_factory.mktemp("corpus")
    return out, _build([SAMPLE], out)


def test_counts_reconcile_and_manifest_describes_the_build(sample_corpus):
    out, manifest = sample_corpus
    counts = manifest["counts"]
    assert manifest["complete"] and manifest["reconciled"]
    assert (
        counts["pages"]
        == 206
        == counts["articles"]
        + counts["redirects"]
        + counts["other_namespace"]
        + sum(counts["skipped"].values())
    )
    assert (counts["articles"], counts["redirects"], counts["other_namespace"]) == (106, 99, 1)
    assert (
        manifest["inputs"][0]["sha256"] == "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"
    )
    assert manifest["config"]["chunk"]["target_tokens"] == 1536 and manifest["versions"]["ray"]
    assert len(manifest["fingerprint"]) == 16
    redirects = pq.read_table(out / "redirects").to_pylist()
    assert (
        len(redirects) == 99
        and {"page_id": 10, "title": "AccessibleComputing", "target": "Computer accessibility", "ns": 0}
        in redirects
    )


def test_chunk_table(sample_corpus):
    out, manifest = sample_corpus
    chunks = pq.read_table(out / "chunks").to_pylist()
    assert len(chunks) == manifest["counts"]["chunks"]
    by_page = {}
    for row in chunks:
        by_page.setdefault(row["page_id"], []).append(row)
    assert len(by_page) == 106
    for page_id, rows in by_page.items():
        assert [r["chunk_id"] for r in rows] == [f"{page_id}_{i}" for i in range(len(rows))]
        assert {r["n_chunks"] for r in rows} == {len(rows)}
    docs = pq.read_table(out / "docs").to_pylist()
    assert [d["page_id"] for d in docs] == list(by_page)


def test_same_input_same_bytes_and_multistream_ranges_in_parallel(sample_corpus, tmp_path):
    out, manifest = sample_corpus
    again = _build([SAMPLE], tmp_path / "again")
    assert again["fingerprint"] == manifest["fingerprint"]
    for table in ("chunks", "docs", "redirects"):
        assert (out / table / "part-00000.parquet").read_bytes() == (
            tmp_path / "again" / table / "part-00000.parquet"
        ).read_bytes()
    dump, index, _ = pack_multistream(SAMPLE, tmp_path / "s-multistream.xml.bz2", pages_per_stream=20)
    ranged = _build([dump], tmp_path / "ranged", index_paths=[index])
    assert ranged["shards"] == 6 and ranged["complete"]
    assert pq.read_table(tmp_path / "ranged" / "chunks").equals(pq.read_table(out / "chunks"))


def test_resume_rebuilds_only_missing_shards(tmp_path):
    dump, index, _ = pack_multistream(SAMPLE, tmp_path / "s-multistream.xml.bz2", pages_per_stream=50)
    out = tmp_path / "corpus"
    first = _build([dump], out, index_paths=[index])
    kept = (out / "chunks" / "part-00000.parquet").stat().st_mtime_ns
    (out / "_stats" / "part-00001.json").unlink()  # as if the job died while building shard 1
    (out / "chunks" / "part-00001.parquet").unlink()
    second = _build([dump], out, index_paths=[index])
    assert (out / "chunks" / "part-00000.parquet").stat().st_mtime_ns == kept
    assert (out / "chunks" / "part-00001.parquet").is_file()
    assert second["counts"] == first["counts"] and second["fingerprint"] == first["fingerprint"]
    with pytest.raises(CorpusBuildError, match="other inputs or another config"):
        _build([dump], out, index_paths=[index], **{"chunk.target_tokens": 512})


def test_resume_rebuilds_shards_with_damaged_parts(tmp_path):
    dump, index, _ = pack_multistream(SAMPLE, tmp_path / "s-multistream.xml.bz2", pages_per_stream=50)
    out = tmp_path / "corpus"
    first = _build([dump], out, index_paths=[index])
    undisturbed = {p.relative_to(out): p.read_bytes() for p in out.glob("*/part-*.parquet")}
    truncated = out / "chunks" / "part-00001.parquet"
    truncated.write_bytes(truncated.read_bytes()[:-100])  # the footer is gone
    short = out / "docs" / "part-00002.parquet"
    pq.write_table(pq.read_table(short).slice(1), short)  # readable, one row fewer than its stats record
    second = _build([dump], out, index_paths=[index])
    rebuilt = {r["shard"]: r["reason"] for r in second["rebuilt_shards"]}
    assert list(rebuilt) == ["part-00001", "part-00002"]
    assert "chunks/part-00001.parquet is unreadable" in rebuilt["part-00001"]
    assert "docs/part-00002.parquet has" in rebuilt["part-00002"]
    assert second["complete"] and second["counts"] == first["counts"]
    assert {p.relative_to(out): p.read_bytes() for p in out.glob("*/part-*.parquet")} == undisturbed
    assert _build([dump], out, index_paths=[index])["rebuilt_shards"] == []


def test_entities_kept_and_counted_and_utf16_read_in_a_build(tmp_path):
    entity = tmp_path / "entity.xml"
    entity.write_text(
        dump_xml([page_xml(1, "Secret", "Before the secret. XXE After it.")]).replace("XXE", "&xxe;")
    )
    utf16 = tmp_path / "utf16.xml"
    utf16.write_bytes(dump_xml([page_xml(2, "Zürich", "Grüße aus Zürich.")]).encode("utf-16"))
    manifest = _build([entity, utf16], tmp_path / "out")
    assert manifest["complete"] and manifest["input_errors"] == []
    assert (manifest["counts"]["articles"], manifest["counts"]["entity_errors"]) == (2, 1)
    docs = {d["title"]: d["markdown"] for d in pq.read_table(tmp_path / "out" / "docs").to_pylist()}
    assert "Before the secret. &xxe; After it." in docs["Secret"] and "Grüße aus Zürich." in docs["Zürich"]


def test_cli_on_embedded_default(tmp_path):
    result = CliRunner().invoke(cli, ["build", "corpus", "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert summary["articles"] == 106 and summary["complete"]


def test_cli_bad_inputs_exit_non_zero_with_a_reason(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        cli, ["build", "corpus", "--dump", str(tmp_path / "missing.xml.bz2"), "--out", str(tmp_path / "a")]
    )
    assert result.exit_code != 0 and "dump file not found" in result.output

    data = SAMPLE.read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) * 3 // 4])
    result = runner.invoke(cli, ["build", "corpus", "--dump", str(cut), "--out", str(tmp_path / "b")])
    assert result.exit_code != 0 and "corpus is incomplete" in result.output
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert not manifest["complete"] and manifest["input_errors"] and manifest["counts"]["articles"] > 0

    empty = tmp_path / "empty.xml"
    empty.write_text(dump_xml([]))
    result = runner.invoke(cli, ["build", "corpus", "--dump", str(empty), "--out", str(tmp_path / "c")])
    assert result.exit_code != 0 and "no articles found" in result.output

    result = runner.invoke(cli, ["build", "corpus", "--out", str(tmp_path / "d"), "chunk.nope=1"])
    assert result.exit_code == 2 and "invalid config" in result.output

    result = runner.invoke(cli, ["build", "corpus", f"corpus.out={empty}"])  # a file as the configured output
    assert (
        result.exit_code == 1
        and f"Error: cannot create output directory {empty}: File exists" in result.output
    )


def test_disambiguation_drop_and_skip_reasons(tmp_path):
    pages = [
        page_xml(1, "Mercury", "Mercury may refer to:\n* [[Mercury (planet)]]\n{{disambiguation}}"),
        page_xml(2, "Venus", "'''Venus''' is a planet."),
        page_xml(3, "Empty", "{{stub}}<!-- nothing -->"),
        page_xml(4, "Talk:Venus", "chat", ns=1),
        page_xml(5, "Morning star", "#REDIRECT [[Venus]]"),
    ]
    dump = tmp_path / "d.xml.bz2"
    dump.write_bytes(bz2.compress(dump_xml(pages).encode()))
    manifest = _build([dump], tmp_path / "out", **{"clean.drop_disambiguation": "true"})
    counts = manifest["counts"]
    assert counts["skipped"] == {"disambiguation": 1, "empty": 1}
    assert (counts["articles"], counts["redirects"], counts["other_namespace"], counts["pages"]) == (
        1,
        1,
        1,
        5,
    )
    assert manifest["reconciled"]


def test_shard_stats_name_the_ray_node_that_built_them(sample_corpus, ray_local):
    out, manifest = sample_corpus
    node = ray_local.get_runtime_context().get_node_id()
    stats = [
        json.loads((out / "_stats" / f"part-{i:05d}.json").read_text()) for i in range(manifest["shards"])
    ]
    assert {s["node_id"] for s in stats} == {node}
