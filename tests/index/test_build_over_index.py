"""``build_index`` over an existing index: a refused build touches nothing, a build killed midway leaves the old
index openable and a rerun finishes it, and one directory is built by one process at a time."""

import fcntl
import os
import shutil
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sws.cli.index import build_index_command, search_command
from sws.index import (
    FaissIndexer,
    FingerprintMismatchError,
    IndexBusyError,
    IndexMissingError,
    WikiIndex,
    build_index,
)
from sws.manifest import OtherArtefactError
from tests.index.helpers import lead_pages, write_corpus

KILLED = """
import os, pathlib, signal, sys
from sws.index import FaissIndexer, build_index

def killed_after(fn):
    def run(*args, **kwargs):
        fn(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    return run

corpus, out, vectors, where = sys.argv[1:]
if where == "first shard":
    FaissIndexer._write = staticmethod(killed_after(FaissIndexer._write))
else:  # the swap's first rename
    pathlib.Path.rename = killed_after(pathlib.Path.rename)
build_index(corpus, out, vectors_dir=vectors, dense=FaissIndexer(m=16, shard_rows=0))
"""


def _contents(root):
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


@pytest.fixture
def whole_copy(leads_root, tmp_path):
    """The leads index with its ``vectors/``, as `cp -r` copies it."""
    return shutil.copytree(leads_root / "index", tmp_path / "index")


@pytest.fixture
def other_corpus(tmp_path):
    return write_corpus(tmp_path / "other", lead_pages()[:3], fingerprint="other-v1")


@pytest.mark.parametrize("vectors", ["embedded", "given"])
def test_a_refused_build_touches_nothing(leads_root, whole_copy, other_corpus, embedder, vectors):
    before = _contents(whole_copy)
    given = {"vectors_dir": leads_root / "index" / "vectors"}
    embedded = {"embedder": embedder, "embed_options": {"workers": 0, "rows_per_unit": 8}}
    with pytest.raises(FingerprintMismatchError, match="holds vectors of another run|do not match corpus"):
        build_index(other_corpus, whole_copy, **(embedded if vectors == "embedded" else given))
    assert _contents(whole_copy) == before
    assert WikiIndex.open(whole_copy).keyword.num_chunks == 17


def test_refused_cli_build_keeps_the_index_searchable(whole_copy, other_corpus):
    refused = CliRunner().invoke(
        build_index_command, ["--corpus", str(other_corpus), "--out", str(whole_copy), "embed.workers=0"]
    )
    assert refused.exit_code == 1
    assert refused.output.startswith(f"Error: {whole_copy / 'vectors'} holds vectors of another run")
    assert refused.output.count("\n") == 1
    found = CliRunner().invoke(
        search_command, ["--index", str(whole_copy), "Bitcoin", "--method", "keywords"]
    )
    assert found.exit_code == 0 and "[Bitcoin]" in found.stdout, found.output


@pytest.mark.parametrize("where", ["first shard", "swap"])
def test_a_killed_rebuild_is_finished_by_a_rerun(leads_root, index_copy, where):
    old = WikiIndex.open(index_copy).manifest
    args = [leads_root / "corpus", index_copy, leads_root / "index" / "vectors"]
    killed = subprocess.run([sys.executable, "-c", KILLED, *map(str, args), where], check=False)
    assert killed.returncode == -signal.SIGKILL
    if where == "first shard":  # while the new parts are built, the old index opens, every file checked
        assert WikiIndex.open(index_copy).manifest == old
    else:  # between the swap's renames the index is unfinished, and says so
        with pytest.raises(IndexMissingError, match="manifest.json is missing"):
            WikiIndex.open(index_copy)

    new = build_index(*args[:2], vectors_dir=args[2], dense=FaissIndexer(m=16, shard_rows=0))
    assert WikiIndex.open(index_copy).manifest == new != old
    assert [s["rows"] for s in new["dense"]["shards"]] == [17]
    assert new["keyword"]["seconds"] == old["keyword"]["seconds"]  # Tantivy kept, not rebuilt
    assert sorted(f for f in new["files"] if f.startswith("faiss/")) == [
        "faiss/build.json",
        "faiss/chunk_ids.arrow",
        "faiss/shard-00000.faiss",  # the old shard-00001 is gone with the old FAISS index
    ]
    assert sorted(p.name for p in index_copy.iterdir()) == ["faiss", "manifest.json", "tantivy"]


def test_one_build_per_directory_at_a_time(leads_root, index_copy):
    before = _contents(index_copy)
    holder = os.open(index_copy, os.O_RDONLY)  # as a running build holds it
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(IndexBusyError, match="another process is building"):
            build_index(leads_root / "corpus", index_copy, vectors_dir=leads_root / "index" / "vectors")
    finally:
        os.close(holder)
    assert _contents(index_copy) == before


@pytest.mark.parametrize("held", ["corpus", "vectors", "unrelated"])
def test_an_out_holding_another_artefact_is_refused_before_anything_is_written(
    leads_root, tmp_path, embedder, held
):
    out = tmp_path / held
    if held == "unrelated":
        out.mkdir()
        (out / "manifest.json").write_text('{"name": "my-app", "version": 3}')
    else:
        shutil.copytree(leads_root / "corpus" if held == "corpus" else leads_root / "index" / "vectors", out)
    corpus = out if held == "corpus" else leads_root / "corpus"  # `--corpus C --out C`
    before = _contents(out)
    vectors = ["--vectors", str(leads_root / "index" / "vectors")]
    refused = CliRunner().invoke(build_index_command, ["--corpus", str(corpus), "--out", str(out), *vectors])
    assert refused.exit_code == 1 and refused.output.count("\n") == 1, refused.output
    what = {"corpus": "an sws-corpus manifest", "vectors": "an sws-vectors/1 manifest"}
    assert refused.output.startswith(
        f"Error: {out} holds {what.get(held, 'a manifest.json that sws did not write')}"
    )
    with pytest.raises(OtherArtefactError, match="use another --out directory"):  # embedding nothing either
        build_index(corpus, out, embedder=embedder, embed_options={"workers": 0})
    assert _contents(out) == before
