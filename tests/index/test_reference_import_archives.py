"""``sws index import`` of the reference index's two parts given apart: two folders, or the paper's two ``.tar.zst``
archives, read streamed into the index's partial folder. They import as the one folder does (the same
fingerprint, the same answers); an interrupted import resumes, keeping the members extracted whole; a damaged
or unsafe archive, or a wrong pair, is refused in one line naming the archive (and the member), and nothing is
presented as the index.

The archives are made here from the leads index's reference export, with the paper's member layout
(``tantivy/chunk-1536/{chunks,titles}/...``; ``faiss/<name>/{index.faiss,ids.pkl}``), real zstd and tar."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import xxhash
import zstandard
from click.testing import CliRunner

from sws.cli import cli
from sws.index.manifest import MANIFEST
from sws.index.reference import export_reference, import_reference
from sws.index.reference.adopt import partial_dir
from sws.index.reference.archive import PROGRESS
from sws.stopping import AGAIN
from tests import processes

TANTIVY_TAR = "enwiki-20260601-tantivy-chunk-1536.tar.zst"
FAISS_TAR = "enwiki-20260601-faiss-hnsw-Qwen3-Embedding-0.6B.tar.zst"
FAISS_NAME = "hnsw-all-MiniLM-L6-v2-chunk-1536-fp16"
QUERY = ["search", "Who founded KickassTorrents?", "--method", "rrf", "--top-k", "5"]


@dataclass(frozen=True)
class Packed:
    """A ``.tar.zst`` made by ``pack``: its file members in order, and for each the compressed size at which
    its data is half written (``mid``) and whole (``end``): a zstd block ends at each, so a copy cut there
    decompresses to exactly that point."""

    path: Path
    members: list[str]
    mid: dict[str, int]
    end: dict[str, int]


def tar_bytes(
    root: Path, tops: list[str], prefix: str = "", extra=()
) -> tuple[bytes, list[tuple[str, int, int]]]:
    """An uncompressed tar of ``root/top`` for each of ``tops`` (names under ``prefix``), ``extra`` (TarInfo,
    data) members first; each file member's name, middle and end offset."""
    buf, bounds = io.BytesIO(), []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in extra:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
        for top in tops:
            for path in [root / top, *sorted((root / top).rglob("*"))]:
                info = tar.gettarinfo(str(path), arcname=prefix + str(path.relative_to(root)))
                if not info.isreg():
                    tar.addfile(info)
                    continue
                with open(path, "rb") as f:
                    tar.addfile(info, f)
                data_start = tar.offset - -(-info.size // 512) * 512
                bounds.append((info.name, data_start + info.size // 2, tar.offset))
    return buf.getvalue(), bounds


def pack(path: Path, root: Path, tops: list[str], prefix: str = "", extra=()) -> Packed:
    """Write the ``tar_bytes`` of ``root`` as a zstd frame (with its checksum, as the zstd tool writes it) at
    ``path``, ending a zstd block at each member's middle and end."""
    data, bounds = tar_bytes(root, tops, prefix, extra)
    z = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    out, at, offsets = bytearray(), 0, {}
    for cut in sorted({c for _, mid, end in bounds for c in (mid, end)}):
        out += z.compress(data[at:cut]) + z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        offsets[cut], at = len(out), cut
    out += z.compress(data[at:]) + z.flush()
    path.write_bytes(out)
    return Packed(
        path,
        [name for name, _, _ in bounds],
        {name: offsets[mid] for name, mid, _ in bounds},
        {name: offsets[end] for name, _, end in bounds},
    )


def zstd(path: Path, data: bytes) -> Path:
    path.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(data))
    return path


@pytest.fixture(scope="module")
def spec(embedder):
    """The query embedder of the leads index (the packaged MiniLM), so that search answers over the imports."""
    return embedder.spec()


@pytest.fixture(scope="module")
def exported(leads_root, tmp_path_factory) -> Path:
    """A folder holding the leads index in the reference's layout, ``reference/`` (``archives`` go beside it)."""
    root = tmp_path_factory.mktemp("archives")
    export_reference(leads_root / "index", root / "reference")
    return root


@pytest.fixture(scope="module")
def archives(exported) -> dict[str, Packed]:
    ref = exported / "reference"
    return {
        "tantivy": pack(exported / TANTIVY_TAR, ref, ["tantivy"]),
        "faiss": pack(exported / FAISS_TAR, ref, ["faiss"]),
    }


@pytest.fixture(scope="module")
def folder_import(exported, spec):
    """The manifest of the one-folder import and its answer to ``QUERY``."""
    out = exported / "folder-idx"
    manifest = import_reference(exported / "reference", out, embedder=spec)
    return manifest, CliRunner().invoke(cli, [*QUERY, "--index", str(out)]).stdout


def _import(*args, spec=None):
    extra = ["--embedder-spec", json.dumps(spec)] if spec else []
    return CliRunner().invoke(cli, ["index", "import", *map(str, args), *extra])


def _refused(result, *names):
    """One line, exit 1, naming each of ``names``."""
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    for name in names:
        assert str(name) in result.output, (name, result.output)


@pytest.mark.parametrize("order", ["tantivy first", "faiss first"])
def test_the_two_archives_import_and_answer_as_the_folder_does(
    archives, folder_import, spec, tmp_path, order
):
    pair = [archives["tantivy"].path, archives["faiss"].path]
    if order == "faiss first":
        pair.reverse()
    before = [(p.stat().st_size, p.stat().st_mtime_ns) for p in pair]
    result = _import(*pair, "--out", tmp_path / "idx", spec=spec)
    assert result.exit_code == 0, result.output
    manifest, answer = folder_import
    assert json.loads(result.output)["fingerprint"] == manifest["fingerprint"]
    idx = tmp_path / "idx"
    ours = json.loads((idx / MANIFEST).read_text())
    assert ours["files"] == manifest["files"] and ours["dense"]["dir"] == f"faiss/{FAISS_NAME}"
    assert CliRunner().invoke(cli, [*QUERY, "--index", str(idx)]).stdout == answer
    assert json.loads(CliRunner().invoke(cli, ["index", "verify", str(idx)]).output)["status"] == "ok"
    assert [(p.stat().st_size, p.stat().st_mtime_ns) for p in pair] == before  # the user's files, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"] and not (idx / PROGRESS).exists()


def test_a_leading_top_folder_in_the_archives_is_found(exported, folder_import, spec, tmp_path):
    ref = exported / "reference"
    tantivy = pack(tmp_path / "t.tar.zst", ref, ["tantivy"], prefix="enwiki-20260601/")
    faiss = pack(tmp_path / "f.tar.zst", ref, [f"faiss/{FAISS_NAME}"], prefix="release/")
    manifest = import_reference([tantivy.path, faiss.path], tmp_path / "idx", embedder=spec)
    assert manifest["fingerprint"] == folder_import[0]["fingerprint"]


FOLDER_PAIRS = {
    "parents of tantivy/ and faiss/": ("t", "f"),
    "tantivy/ and faiss/": ("t/tantivy", "f/faiss"),
    "chunk-1536/ and faiss/<name>/": ("t/tantivy/chunk-1536", f"f/faiss/{FAISS_NAME}"),
    "faiss/<name>/ first": (f"f/faiss/{FAISS_NAME}", "t/tantivy"),
}


@pytest.mark.parametrize("pair", FOLDER_PAIRS)
def test_the_two_folders_given_apart_import_as_the_one_folder_does(
    exported, folder_import, spec, tmp_path, pair
):
    shutil.copytree(exported / "reference" / "tantivy", tmp_path / "t" / "tantivy")
    shutil.copytree(exported / "reference" / "faiss", tmp_path / "f" / "faiss")
    result = _import(*(tmp_path / p for p in FOLDER_PAIRS[pair]), "--out", tmp_path / "idx", spec=spec)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["fingerprint"] == folder_import[0]["fingerprint"]
    rel = f"faiss/{FAISS_NAME}/index.faiss"  # adopted in place: hard-linked
    assert os.stat(tmp_path / "idx" / rel).st_ino == os.stat(tmp_path / "f" / rel).st_ino


def test_a_folder_and_an_archive_go_together_too(exported, archives, folder_import, spec, tmp_path):
    manifest = import_reference(
        [exported / "reference" / "tantivy", archives["faiss"].path], tmp_path / "idx", embedder=spec
    )
    assert manifest["fingerprint"] == folder_import[0]["fingerprint"]


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file() and p.name != PROGRESS
    }


def _big_member(packed: Packed) -> str:
    """The first member whose data the cut at its middle leaves short, with whole members before it."""
    return next(m for m in packed.members[1:] if packed.mid[m] < packed.end[m])


def test_an_interrupted_import_resumes_keeping_the_members_extracted_whole(
    archives, folder_import, spec, tmp_path
):
    whole = archives["tantivy"]
    member = _big_member(whole)
    cut = tmp_path / "download" / TANTIVY_TAR
    cut.parent.mkdir()
    cut.write_bytes(whole.path.read_bytes()[: whole.mid[member]])
    out, partial = tmp_path / "idx", partial_dir(tmp_path / "idx")
    first = _import(cut, archives["faiss"].path, "--out", out, spec=spec)
    _refused(first, cut, f"in member {member}: its zstd frame is cut short")
    assert not out.exists() and partial.is_dir()
    done = whole.members[: whole.members.index(member)]
    recorded = [json.loads(line)["member"] for line in (partial / PROGRESS).read_text().splitlines()]
    assert recorded == done
    kept = {rel: stat for rel, stat in _files(partial).items() if rel in done}  # the paper's names: its paths
    assert sorted(kept) == sorted(done)
    second = _import(whole.path, archives["faiss"].path, "--out", out, spec=spec)
    assert second.exit_code == 0, second.output
    assert json.loads(second.output)["fingerprint"] == folder_import[0]["fingerprint"]
    now = _files(out)
    assert {rel: now[rel] for rel in kept} == kept  # not rewritten: the same inode and mtime
    assert not partial.exists() and not (out / PROGRESS).exists()


def test_a_changed_member_is_extracted_again_and_stray_files_are_removed(
    archives, folder_import, spec, tmp_path
):
    out, partial = tmp_path / "idx", partial_dir(tmp_path / "idx")
    whole = archives["tantivy"]
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(whole.path.read_bytes()[: whole.mid[_big_member(whole)]])
    _refused(_import(cut, archives["faiss"].path, "--out", out), cut)
    lines = (partial / PROGRESS).read_text().splitlines()
    record = json.loads(lines[0])  # as if extracted from another archive: same name and size, other bytes
    path = partial / record["path"]
    path.write_bytes(bytes(record["size"]))
    lines[0] = json.dumps(record | {"xxh3": xxhash.xxh3_128(bytes(record["size"])).hexdigest()})
    (partial / PROGRESS).write_text("".join(line + "\n" for line in lines))
    (partial / "tantivy/chunk-1536/chunks/stray.bin").write_bytes(b"from another run")
    manifest = import_reference([whole.path, archives["faiss"].path], out, embedder=spec)
    assert manifest["fingerprint"] == folder_import[0]["fingerprint"]
    assert not (out / "tantivy/chunk-1536/chunks/stray.bin").exists()


def test_sigterm_stops_the_extraction_with_its_line_and_a_rerun_resumes(
    archives, folder_import, spec, tmp_path
):
    """The archive is a FIFO fed its first members: the import waits for more when SIGTERM comes."""
    whole = archives["tantivy"]
    member = _big_member(whole)
    fifo, out = tmp_path / TANTIVY_TAR, tmp_path / "idx"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "sws", "index", "import", str(fifo), str(archives["faiss"].path)]
    stderr = tmp_path / "stderr.log"
    with stderr.open("w") as err:
        process = processes.popen([*command, "--out", str(out)], stderr=err, stdout=err)
    deadline = time.monotonic() + 120  # a hang guard, not a timing
    while True:
        assert process.poll() is None and time.monotonic() < deadline, stderr.read_text()
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:  # ENXIO: not opened for reading yet
            time.sleep(0.05)
    os.set_blocking(writer, True)
    os.write(writer, whole.path.read_bytes()[: whole.mid[member]])
    progress = partial_dir(out) / PROGRESS  # the import waits in the member cut short, those before it whole
    while not (progress.exists() and progress.read_text().count("\n") == whole.members.index(member)):
        assert process.poll() is None and time.monotonic() < deadline, stderr.read_text()
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGTERM)
    code = process.wait(timeout=90)
    os.close(writer)
    lines = stderr.read_text().strip().splitlines()
    assert code == 143, lines
    assert lines[-1] == (
        f"interrupted by SIGTERM: the archive members extracted whole are kept in {partial_dir(out)}; {AGAIN}"
    )
    done = whole.members[: whole.members.index(member)]
    kept = {rel: stat for rel, stat in _files(partial_dir(out)).items() if rel in done}
    assert sorted(kept) == sorted(done)
    manifest = import_reference([whole.path, archives["faiss"].path], out, embedder=spec)
    assert manifest["fingerprint"] == folder_import[0]["fingerprint"]
    assert {rel: _files(out)[rel] for rel in kept} == kept


def _bad_header(exported: Path, tmp: Path) -> tuple[Path, str]:
    """The checksum of the header after the first file member (the second file member's, or its pax header) spoiled."""
    data, bounds = tar_bytes(exported / "reference", ["tantivy"])
    (first, _, header) = bounds[0]
    data = data[: header + 148] + b"0000000\0" + data[header + 156 :]
    return zstd(tmp / TANTIVY_TAR, data), f"after member {first}: bad tar header"


def _short_member(exported: Path, tmp: Path) -> tuple[Path, str]:
    """A whole zstd frame holding a tar cut in a member's data."""
    data, bounds = tar_bytes(exported / "reference", ["tantivy"])
    name, mid, _ = next(b for b in bounds[1:] if b[1] < b[2] - 1)
    return zstd(tmp / TANTIVY_TAR, data[:mid]), f"in member {name}: unexpected end of data"


def _frame_end_cut(archives, tmp: Path) -> tuple[Path, str]:
    """Every member whole, the zstd frame's end (its checksum) missing."""
    whole = archives["tantivy"]
    path = tmp / TANTIVY_TAR
    path.write_bytes(whole.path.read_bytes()[:-4])
    return path, f"after member {whole.members[-1]}: its zstd frame is cut short"


def _corrupt(archives, tmp: Path) -> tuple[Path, str]:
    data = bytearray(archives["tantivy"].path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path = tmp / TANTIVY_TAR
    path.write_bytes(bytes(data))
    return path, "is damaged "


def _not_zstd(archives, tmp: Path) -> tuple[Path, str]:
    path = tmp / TANTIVY_TAR
    path.write_bytes(b"this is not a zstd archive")
    return path, "before its first member: its zstd data is corrupt"


DAMAGED = {
    "bad tar header": lambda exported, archives, tmp: _bad_header(exported, tmp),
    "member shorter than its header": lambda exported, archives, tmp: _short_member(exported, tmp),
    "zstd frame end cut": lambda exported, archives, tmp: _frame_end_cut(archives, tmp),
    "corrupt zstd data": lambda exported, archives, tmp: _corrupt(archives, tmp),
    "not zstd": lambda exported, archives, tmp: _not_zstd(archives, tmp),
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_archive_is_refused_in_one_line_naming_it_and_the_member(
    exported, archives, tmp_path, damage
):
    (tmp_path / "in").mkdir()
    path, message = DAMAGED[damage](exported, archives, tmp_path / "in")
    result = _import(path, archives["faiss"].path, "--out", tmp_path / "idx")
    _refused(result, f"{path} is damaged", message)
    assert not (tmp_path / "idx").exists()


def _member(name: str, kind=tarfile.REGTYPE, data: bytes | None = b"x", linkname: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


UNSAFE = {
    "../": (
        _member("tantivy/chunk-1536/chunks/../../../../../escaped"),
        "would be written outside the index",
    ),
    "absolute": (_member("/tmp/sws-import-escaped"), "would be written outside the index"),
    "symlink": (
        _member("tantivy/chunk-1536/chunks/link", tarfile.SYMTYPE, linkname="/etc/passwd"),
        "is a symbolic link",
    ),
    "hard link": (
        _member(
            "tantivy/chunk-1536/chunks/hard", tarfile.LNKTYPE, linkname="tantivy/chunk-1536/chunks/meta.json"
        ),
        "is a hard link",
    ),
    "device": (_member("tantivy/chunk-1536/chunks/dev", tarfile.CHRTYPE), "is a device"),
}


@pytest.mark.parametrize("unsafe", UNSAFE)
def test_an_unsafe_member_is_refused_and_nothing_is_written_outside(exported, archives, tmp_path, unsafe):
    member, message = UNSAFE[unsafe]
    tar = pack(tmp_path / TANTIVY_TAR, exported / "reference", ["tantivy"], extra=[member])
    result = _import(tar.path, archives["faiss"].path, "--out", tmp_path / "work" / "idx")
    _refused(result, tar.path, f"member {member[0].name} {message}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [TANTIVY_TAR, "work"]
    assert not Path("/tmp/sws-import-escaped").exists() and not (tmp_path / "escaped").exists()
    assert not (tmp_path / "work" / "idx").exists()


def test_the_wrong_pair_or_a_missing_part_is_refused_in_one_line(exported, archives, tmp_path):
    other = tmp_path / "copy-of-tantivy.tar.zst"
    shutil.copy(archives["tantivy"].path, other)
    out = tmp_path / "idx"
    two = _import(archives["tantivy"].path, other, "--out", out)
    _refused(
        two,
        f"{archives['tantivy'].path} and {other} both hold the Tantivy indexes",
        "one Tantivy and one FAISS",
    )
    no_tantivy = _import(archives["faiss"].path, "--out", out)
    _refused(
        no_tantivy, f"{archives['faiss'].path} is not in the reference's layout: tantivy/chunk-1536/chunks/"
    )
    no_faiss = _import(archives["tantivy"].path, "--out", out)
    _refused(no_faiss, "no faiss/*/{index.faiss,ids.pkl} (or give the FAISS part")
    neither = _import(
        exported / "reference", tmp_path, "--out", out
    )  # all in the first, nothing in the second
    _refused(neither, f"{tmp_path} holds neither the Tantivy indexes")
    twice = _import(archives["faiss"].path, archives["faiss"].path, "--out", out)
    _refused(twice, "is given twice")
    three = _import(archives["faiss"].path, other, tmp_path, "--out", out)
    assert three.exit_code == 2 and "3 sources" in three.output
    assert not out.exists()
