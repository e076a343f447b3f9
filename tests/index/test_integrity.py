"""Index integrity: per-file checksums in the manifest, ``sws index verify``, checks on open, and damage
that keeps every file's size (a zeroed stretch of a Tantivy ``.store`` or ``.term`` file)."""

import json

import pytest
import xxhash
from click.testing import CliRunner

from sws.cli import cli
from sws.env import BackendFailure, WikiTools, call_tool
from sws.index import IndexCorruptError, WikiIndex
from sws.search import SearchEngine
from tests.index.helpers import zero_half


def _largest(index, suffix):
    return max((index / "tantivy" / "chunks").glob(f"*{suffix}"), key=lambda p: p.stat().st_size)


def _sws(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _one_line_error(result, *fragments):
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_manifest_records_a_checksum_per_file(leads_root):
    index = leads_root / "index"
    manifest = json.loads((index / "manifest.json").read_text())
    checksums = manifest["checksums"]
    assert checksums["algorithm"] == "xxh3_128" and set(checksums["files"]) == set(manifest["files"])
    store = _largest(index, ".store").relative_to(index)
    assert checksums["files"][str(store)] == xxhash.xxh3_128((index / store).read_bytes()).hexdigest()


def test_verify_passes_a_sound_index_even_after_it_was_searched(index_copy):
    SearchEngine.open(index_copy).search("Bitcoin", 3, "keywords")  # opening and reading changes no file
    result = _sws("index", "verify", index_copy)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "index": str(index_copy),
        "files": len(json.loads((index_copy / "manifest.json").read_text())["files"]),
        "bytes": sum(json.loads((index_copy / "manifest.json").read_text())["files"].values()),
        "checksum": "xxh3_128",
        "status": "ok",
    }


def test_zeroed_store_is_named_by_verify_and_refused_by_open_with_verify(damaged_index):
    stores = [s.name for s in sorted((damaged_index / "tantivy" / "chunks").glob("*.store"))]
    _one_line_error(_sws("index", "verify", damaged_index), "damaged index files", *stores)
    with pytest.raises(IndexCorruptError, match=rf"{stores[0]} is damaged: its xxh3_128 checksum differs"):
        WikiIndex.open(damaged_index, verify=True)
    _one_line_error(_sws("search", "--index", damaged_index, "--verify", "Bitcoin"), stores[0])


def test_zeroed_store_without_verify_is_a_backend_failure_not_an_argument_error(damaged_index):
    tools = WikiTools(SearchEngine.open(damaged_index))  # sizes match: it opens
    with pytest.raises(BackendFailure, match="IO error"):
        call_tool(tools, "search", json.dumps({"query": "Bitcoin", "top_k": 3, "method": "keywords"}))
    with pytest.raises(BackendFailure, match="IO error"):
        call_tool(tools, "open_url", json.dumps({"url": "/wiki/Bitcoin"}))
    for args in (
        ["search", "--index", damaged_index, "Bitcoin"],
        ["open", "--index", damaged_index, "/wiki/Bitcoin"],
    ):
        _one_line_error(_sws(*args), "IO error", f"sws index verify {damaged_index}")


def test_zeroed_term_file_is_a_one_line_error(index_copy):
    term = _largest(index_copy, ".term")
    zero_half(term, start=0.0)
    _one_line_error(
        _sws("search", "--index", index_copy, "Bitcoin"),
        "cannot read Tantivy index",
        f"sws index verify {index_copy}",
    )
    _one_line_error(_sws("index", "verify", index_copy), term.name, "checksum differs")


def test_every_damaged_file_is_named(damaged_index):
    term = _largest(damaged_index, ".term")
    zero_half(term)
    stores = sorted((damaged_index / "tantivy" / "chunks").glob("*.store"))
    result = _sws("index", "verify", damaged_index)
    _one_line_error(result, f"{len(stores) + 1} damaged index files", term.name, *(s.name for s in stores))


def test_index_without_checksums_opens_on_sizes_and_verify_says_so(index_copy, caplog):
    manifest = json.loads((index_copy / "manifest.json").read_text())
    del manifest["checksums"]  # as built before checksums were recorded
    (index_copy / "manifest.json").write_text(json.dumps(manifest))
    zero_half(_largest(index_copy, ".store"))  # undetectable without checksums
    WikiIndex.open(index_copy)
    with caplog.at_level("WARNING", logger="sws.index.manifest"):
        WikiIndex.open(index_copy, verify=True)
    assert "records no checksums" in caplog.text and "sizes checked only" in caplog.text
    files = f"{len(manifest['files'])} files match"  # Tantivy's segment count varies with the build's timing
    _one_line_error(_sws("index", "verify", index_copy), "records no checksums", files)
