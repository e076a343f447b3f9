"""The corpus build checks its inputs against the fetch manifest (next to the dump, or dump.fetch_manifest)
before any work: a wrong size or checksum is refused with a clear error and a non-zero exit."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.config import load_config, to_dict
from sws.corpus.build import CorpusBuildError, _plan, build_corpus
from sws.fetch import FETCH_MANIFEST, FetchManifestError, expected_digests, update_fetch_manifest
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
    paths = [str(fetched / DUMP), str(fetched / INDEX)]
    plan = _plan(tmp_path, paths[:1], paths[1:], OPTIONS, 2, expected_digests(paths))
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
            expected=expected_digests([fetched / DUMP, fetched / INDEX]),
        )
    expected = hashlib.sha1(dump_files[DUMP]).hexdigest()
    assert str(err.value) == (
        f"{fetched / DUMP}: sha1 {actual} does not match {expected} recorded in {fetched / FETCH_MANIFEST}: the "
        f"file is corrupt or not the one fetched; run `sws fetch dump` again (or set dump.fetch_manifest to the "
        f"right manifest)"
    )
    assert not (tmp_path / "out" / "_plan.json").exists()


@pytest.mark.parametrize(
    ("flag", "warning"),
    [
        ("--multistream-index", ""),
        ("--index", "warning: --index is deprecated here, use --multistream-index\n"),  # the old name
    ],
)
def test_the_cli_exits_non_zero_with_the_reason(fetched, tmp_path, monkeypatch, flag, warning):
    monkeypatch.setattr("sws.raykit.init_ray", lambda *a, **k: None)  # refused before any Ray work
    _corrupt(fetched, INDEX)
    args = [
        "build",
        "corpus",
        "--dump",
        str(fetched / DUMP),
        flag,
        str(fetched / INDEX),
        "--out",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{warning}Error: {fetched / INDEX}: sha1 ")
    assert "does not match" in result.stderr


def test_sizes_are_checked_before_hashing_and_an_explicit_manifest_must_list_every_input(fetched, tmp_path):
    (fetched / DUMP).write_bytes((fetched / DUMP).read_bytes()[:-10])
    with pytest.raises(
        CorpusBuildError, match=r"has 1,713,007 bytes but .* recorded 1,713,017: the file is truncated"
    ):
        paths = [str(fetched / DUMP), str(fetched / INDEX)]
        _plan(tmp_path, paths[:1], paths[1:], OPTIONS, 2, expected_digests(paths))
    other = tmp_path / "other.xml.bz2"
    other.write_bytes(b"")
    with pytest.raises(FetchManifestError, match="other.xml.bz2 is not listed in fetch manifest"):
        expected_digests([other], fetched / FETCH_MANIFEST)
    with pytest.raises(FetchManifestError, match="set dump.fetch_manifest=null to build without checking"):
        expected_digests([other], tmp_path / "nowhere.json")
    manifest = json.loads((fetched / FETCH_MANIFEST).read_text())
    assert manifest["kind"] == "sws-fetch" and set(manifest["files"]) == {DUMP, INDEX}


def test_the_ray_job_refuses_inputs_its_fetch_manifest_does_not_list(fetched, tmp_path):
    """ray_jobs/build_corpus.py runs the same stage as the CLI: the fetch manifest is checked (before Ray
    starts), and a refusal is a one-line error with exit status 1."""
    repo = Path(__file__).resolve().parents[2]
    manifest = tmp_path / "nowhere.json"
    args = ["--dump", fetched / DUMP, "--out", tmp_path / "o", f"dump.fetch_manifest={manifest}"]
    result = subprocess.run(
        [sys.executable, "ray_jobs/build_corpus.py", *map(str, args)],
        check=False,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"Error: fetch manifest {manifest} not found: fetch the dump with `sws fetch dump` (which writes it), "
        "or set dump.fetch_manifest=null to build without checking the dump\n"
    )
    assert not (tmp_path / "o").exists()
