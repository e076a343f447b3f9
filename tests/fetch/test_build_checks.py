"""The corpus build checks its inputs against the fetch manifest (next to the dump, or dump.fetch_manifest)
before any work: a wrong size or checksum is refused with a clear error and a non-zero exit."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.config import load_config, to_dict
from sws.corpus.build import CorpusBuildError, _plan, build_corpus
from sws.fetch import FETCH_MANIFEST, update_fetch_manifest
from tests.fetch.conftest import DUMP, INDEX

OPTIONS = {"clean": {}, "chunk": {}}


@pytest.fixture
def fetched(dump_files, tmp_path):
    """A dump directory as `sws fetch dump` leaves it."""
    folder = tmp_path / "dump"
    folder.mkdir()
    records = {}
    for name, body in dump_files.items():
        (folder / name).write_bytes(body)
        records[name] = {
            "url": f"https://dumps.example/{name}",
            "bytes": len(body),
            "sha1": hashlib.sha1(body).hexdigest(),
        }
    update_fetch_manifest(folder / FETCH_MANIFEST, records)
    return folder


def _corrupt(folder, name=DUMP):
    body = bytearray((folder / name).read_bytes())
    body[1000] ^= 0xFF
    (folder / name).write_bytes(bytes(body))
    return hashlib.sha1(body).hexdigest()


def test_matching_inputs_plan_with_the_recorded_sha1_computed_alongside_sha256(fetched, dump_files, tmp_path):
    plan = _plan(tmp_path, [str(fetched / DUMP)], [str(fetched / INDEX)], OPTIONS, 2)
    assert [(i["name"], i["sha1"]) for i in plan["inputs"]] == [
        (n, hashlib.sha1(dump_files[n]).hexdigest()) for n in (DUMP, INDEX)
    ]
    assert plan["inputs"][0]["sha256"] == hashlib.sha256(dump_files[DUMP]).hexdigest()


def test_a_dump_whose_sha1_differs_from_the_fetch_manifest_is_refused(fetched, dump_files, tmp_path):
    actual = _corrupt(fetched)
    plain = to_dict(load_config("local"))
    with pytest.raises(CorpusBuildError) as err:
        build_corpus(
            [str(fetched / DUMP)],
            tmp_path / "out",
            clean=plain["clean"],
            chunk=plain["chunk"],
            index_paths=[str(fetched / INDEX)],
            progress=False,
        )
    expected = hashlib.sha1(dump_files[DUMP]).hexdigest()
    assert str(err.value) == (
        f"{fetched / DUMP}: sha1 {actual} does not match {expected} recorded in {fetched / FETCH_MANIFEST}: the "
        f"file is corrupt or not the one fetched; run `sws fetch dump` again (or set dump.fetch_manifest to the "
        f"right manifest)"
    )
    assert not (tmp_path / "out" / "_plan.json").exists()


def test_the_cli_exits_non_zero_with_the_reason(fetched, tmp_path, monkeypatch):
    monkeypatch.setattr("sws.raykit.init_ray", lambda *a, **k: None)  # refused before any Ray work
    _corrupt(fetched, INDEX)
    args = [
        "build",
        "corpus",
        "--dump",
        str(fetched / DUMP),
        "--index",
        str(fetched / INDEX),
        "--out",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {fetched / INDEX}: sha1 ")
    assert "does not match" in result.stderr


def test_sizes_are_checked_before_hashing_and_an_explicit_manifest_must_list_every_input(fetched, tmp_path):
    (fetched / DUMP).write_bytes((fetched / DUMP).read_bytes()[:-10])
    with pytest.raises(
        CorpusBuildError, match=r"has 1,713,007 bytes but .* recorded 1,713,017: the file is truncated"
    ):
        _plan(tmp_path, [str(fetched / DUMP)], [str(fetched / INDEX)], OPTIONS, 2)
    other = tmp_path / "other.xml.bz2"
    other.write_bytes(b"")
    with pytest.raises(CorpusBuildError, match="other.xml.bz2 is not listed in fetch manifest"):
        _plan(tmp_path, [str(other)], [], OPTIONS, 2, fetch_manifest=str(fetched / FETCH_MANIFEST))
    with pytest.raises(CorpusBuildError, match="set dump.fetch_manifest=null to build without checking"):
        _plan(tmp_path, [str(other)], [], OPTIONS, 2, fetch_manifest=str(tmp_path / "nowhere.json"))
    manifest = json.loads((fetched / FETCH_MANIFEST).read_text())
    assert manifest["kind"] == "sws-fetch" and set(manifest["files"]) == {DUMP, INDEX}
