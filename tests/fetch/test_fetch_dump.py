"""``sws fetch dump`` against a local Wikimedia-style dumps site."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.fetch import read_fetch_manifest
from tests.fetch.conftest import DATE, DUMP, INDEX

FAST = ["--no-progress", "--backoff", "0"]


def _run(server, *args):
    return CliRunner().invoke(cli, ["fetch", "dump", "--mirror", server.url, *FAST, *args])


def test_latest_is_the_newest_complete_dump_fetched_verified_and_recorded(server, dump_files, tmp_path):
    server.state.cut_once[f"/enwiki/{DATE}/{DUMP}"] = 700_000
    result = _run(server, "--wiki", "enwiki", "--date", "latest", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["date"] == DATE  # 20260701 is still running
    assert summary["dump.paths"] == [str(tmp_path / DUMP)] and summary["dump.index_paths"] == [
        str(tmp_path / INDEX)
    ]
    assert "retry 1/5" in result.stderr
    for name, body in dump_files.items():
        assert (tmp_path / name).read_bytes() == body
        assert server.state.served[f"/enwiki/{DATE}/{name}"] == len(body)  # resumed, not re-sent
    manifest = read_fetch_manifest(tmp_path / "fetch-manifest.json")
    assert manifest["sources"]["dump"] | {"base_url": None} == {
        "wiki": "enwiki",
        "date": DATE,
        "base_url": None,
        "job": "articlesmultistreamdumprecombine",
        "status_url": f"{server.url}/enwiki/{DATE}/dumpstatus.json",
        "split": False,
        "dumps": [DUMP],
        "indexes": [INDEX],
    }
    entry = manifest["files"][DUMP]
    assert entry["sha1"] == hashlib.sha1(dump_files[DUMP]).hexdigest() and "md5" not in entry
    assert (entry["url"], entry["bytes"], entry["checksum_source"]) == (
        f"{server.url}/enwiki/{DATE}/{DUMP}",
        len(dump_files[DUMP]),
        "dumpstatus.json",
    )
    again = _run(server, "--wiki", "enwiki", "--date", DATE, "--out", str(tmp_path))
    assert again.exit_code == 0, again.output
    assert [f["status"] for f in json.loads(again.stdout)["files"]] == ["present", "present"]
    assert server.state.served[f"/enwiki/{DATE}/{DUMP}"] == len(dump_files[DUMP])  # verified, not fetched


def test_dry_run_lists_files_with_sizes_and_downloads_nothing(server, dump_files, tmp_path):
    result = _run(server, "--wiki", "enwiki", "--date", DATE, "--out", str(tmp_path / "d"), "--dry-run")
    assert result.exit_code == 0, result.output
    size = len(dump_files[DUMP])
    assert f"{size:,} B" in result.stdout and f"{DUMP}  [new]" in result.stdout
    assert f"sha1 {hashlib.sha1(dump_files[DUMP]).hexdigest()}" in result.stdout
    assert f"total: 2 file(s), {size + len(dump_files[INDEX]):,} B" in result.stdout
    assert not (tmp_path / "d").exists()
    assert set(server.state.served) == {f"/enwiki/{DATE}/dumpstatus.json"}  # no dump byte was sent
    split = _run(
        server, "--wiki", "enwiki", "--date", DATE, "--out", str(tmp_path / "d"), "--split", "--dry-run"
    )
    assert split.exit_code == 0, split.output
    names = [line.split()[-2] for line in split.stdout.splitlines() if line.strip().endswith("[new]")]
    assert names == [
        f"enwiki-{DATE}-pages-articles-multistream1.xml-p1p41242.bz2",
        f"enwiki-{DATE}-pages-articles-multistream-index1.txt-p1p41242.bz2",
        f"enwiki-{DATE}-pages-articles-multistream2.xml-p41243p151573.bz2",
        f"enwiki-{DATE}-pages-articles-multistream-index2.txt-p41243p151573.bz2",
    ]


def test_a_corrupted_dump_fails_its_checksum_and_exits_non_zero(server, dump_files, tmp_path):
    bad = bytearray(dump_files[DUMP])
    bad[len(bad) // 2] ^= 0xFF
    server.state.files[f"/enwiki/{DATE}/{DUMP}"] = bytes(bad)
    result = _run(server, "--wiki", "enwiki", "--date", DATE, "--out", str(tmp_path))
    assert result.exit_code == 1
    assert f"sha1 {hashlib.sha1(bad).hexdigest()} does not match the published" in result.stderr
    assert not (tmp_path / DUMP).exists() and not (tmp_path / f"{DUMP}.part").exists()


@pytest.mark.parametrize(
    "args, url",
    [
        (["--wiki", "enwiki", "--date", "20990101"], "/enwiki/20990101/dumpstatus.json"),
        (["--wiki", "nosuchwiki", "--date", "latest"], "/nosuchwiki/"),
    ],
)
def test_a_missing_dump_is_a_clear_error_naming_the_url(server, tmp_path, args, url):
    result = _run(server, *args, "--out", str(tmp_path))
    assert result.exit_code == 1
    assert f"HTTP 404 Not Found for {server.url}{url}" in result.stderr


def test_a_mirror_without_status_files_is_read_through_its_md5sums(server, dump_files, tmp_path):
    result = _run(server, "--wiki", "simplewiki", "--date", DATE, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    entry = read_fetch_manifest(tmp_path / "fetch-manifest.json")["files"][
        DUMP.replace("enwiki", "simplewiki")
    ]
    assert entry["md5"] == hashlib.md5(dump_files[DUMP]).hexdigest()
    assert entry["checksum_source"] == f"simplewiki-{DATE}-md5sums.txt"


def test_wiki_date_and_directory_default_from_the_config(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run(server, "-c", "paper", "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"enwiki {DATE} from {server.url} -> data/enwiki-{DATE} (dry run")
