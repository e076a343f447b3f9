"""The paper's ``.tar.zst`` archives extracted, streamed and resumable, into an import's partial folder.

Each archive is read once, forward: the zstd frames are decompressed a block at a time and ``tarfile`` reads
the stream (``mode="r|"``), so neither the archive nor a member is ever whole in memory, and each member is
written straight to its place in the layout under the partial folder, which the import then adopts in place.
Where a member goes is found from its path, whatever folders lead to it: a file under a ``chunks/`` or
``titles/`` folder is the Tantivy part's (``tantivy/chunk-1536/chunks/...``), an ``index.faiss`` or ``ids.pkl``
the FAISS part's (``faiss/<its folder's name>/...``); other members are read past. An archive holds the Tantivy
part, the FAISS part or both, each under one folder.

Resumable: once a member is written whole (and synced), a line in ``PROGRESS`` records its path, size and
xxh3-128; a rerun reads past a recorded member whose file is still there at that size, without rewriting it,
checking the checksum of what it reads past (a differing member is extracted again, in a second pass).

Refused, with one line naming the archive and the member (``ArchiveError``): a zstd frame cut short or
corrupt, a bad tar header, a member shorter than its header says, a member that is not a plain file or folder
(links, devices, FIFOs) or whose path is absolute or climbs with ``..`` (``tarfile``'s ``filter="data"``
refuses these too; nothing is written outside the partial folder), and a part two sources hold.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path, PurePosixPath

import xxhash

from sws.index.errors import IndexCorruptError
from sws.index.reference.layout import CHUNKS_DIR, IDS_FILE, INDEX_FILE, TANTIVY_DIR, TITLES_DIR
from sws.index.reference.sources import FAISS, TANTIVY, WHAT
from sws.io import write_text_atomically

PROGRESS = ".sws-extract.jsonl"  # in the partial folder: one JSON line per member written whole
_BLOCK = 1 << 20  # member bytes per read and write
_ZSTD_IN = 1 << 16  # compressed bytes per decompression call: bounds what one call inflates to
_MAX_WINDOW = 1 << 31  # archives compressed with `zstd --long=31`


class ArchiveError(IndexCorruptError):
    """A ``.tar.zst`` archive that cannot be extracted as a part of a reference-layout index."""


class _Damaged(Exception):
    """The stream is damaged; ``extract_archive`` names the archive and the member."""


class _ZstdStream:
    """The decompressed bytes of a zstd file (one frame or several), read forward; a frame cut short or
    corrupt raises ``_Damaged`` (``zstandard``'s ``stream_reader`` ends quietly on a truncated frame)."""

    def __init__(self, raw):
        from zstandard import ZstdDecompressor

        self._raw, self._zstd = raw, ZstdDecompressor(max_window_size=_MAX_WINDOW)
        self._frame, self._pending, self._out, self._at = None, b"", b"", 0

    def read(self, size: int = -1) -> bytes:
        while self._at >= len(self._out):
            if not self._fill():
                return b""
        end = len(self._out) if size < 0 else self._at + size
        data = self._out[self._at : end]
        self._at += len(data)
        return data

    def _fill(self) -> bool:
        """Decompress the next input block; False at the end of the file, after whole frames only."""
        from zstandard import ZstdError

        data, self._pending = self._pending or self._raw.read(_ZSTD_IN), b""
        if not data:
            if self._frame is None:
                raise _Damaged("the file is empty")
            if not self._frame.eof:
                raise _Damaged("its zstd frame is cut short (an incomplete download?)")
            return False
        if self._frame is None or self._frame.eof:
            self._frame = self._zstd.decompressobj()
        try:
            self._out, self._at = self._frame.decompress(data), 0
        except ZstdError as exc:
            raise _Damaged(f"its zstd data is corrupt ({exc})") from None
        if self._frame.eof:
            self._pending = self._frame.unused_data
        return True


class _StrictTarInfo(tarfile.TarInfo):
    """A header that is not a header is an error: ``tarfile`` would end the archive there quietly."""

    @classmethod
    def frombuf(cls, buf, encoding, errors):
        try:
            return super().frombuf(buf, encoding, errors)
        except tarfile.EOFHeaderError:  # the zero block that ends a tar
            raise
        except tarfile.HeaderError as exc:
            raise _Damaged(f"bad tar header ({exc})") from None


def _kind(member: tarfile.TarInfo) -> str:
    for test, kind in (
        ("issym", "a symbolic link"),
        ("islnk", "a hard link"),
        ("isdev", "a device"),
        ("isfifo", "a FIFO"),
    ):
        if getattr(member, test)():
            return kind
    return f"of tar type {member.type!r}"


class _Targets:
    """Where each member of the archives goes in the layout; which archive holds which part (each part in
    one folder of one source: ``taken`` are the parts that folders given beside the archives hold)."""

    def __init__(self, taken: dict[str, str]):
        self.held: dict[str, tuple[str, tuple[str, ...]]] = {
            kind: (label, ()) for kind, label in taken.items()
        }

    def target(self, member: tarfile.TarInfo, archive: str) -> str | None:
        """``member``'s path in the layout, or None: read past it.

        Raises:
            ArchiveError: an unsafe member, or a part that another source holds.
        """
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts:
            raise ArchiveError(f"{archive}: member {member.name} would be written outside the index: refused")
        if not (member.isreg() or member.isdir()):
            raise ArchiveError(
                f"{archive}: member {member.name} is {_kind(member)}: only files are extracted"
            )
        parts = path.parts
        if member.isdir() or not parts:
            return None
        for i, part in enumerate(parts[:-1]):
            if part in (CHUNKS_DIR.name, TITLES_DIR.name):
                self._hold(TANTIVY, parts[:i], archive, member.name)
                return str(TANTIVY_DIR.joinpath(*parts[i:]))
        if len(parts) >= 2 and parts[-1] in (INDEX_FILE, IDS_FILE):
            self._hold(FAISS, parts[:-1], archive, member.name)
            return str(PurePosixPath("faiss", *parts[-2:]))
        return None

    def _hold(self, kind: str, folder: tuple[str, ...], archive: str, member: str) -> None:
        label, held = self.held.setdefault(kind, (archive, folder))
        if label != archive:
            raise ArchiveError(
                f"{label} and {archive} both hold {WHAT[kind]} (member {member}): give one Tantivy and one FAISS "
                "source"
            )
        if held != folder:
            raise ArchiveError(
                f"{archive} holds {WHAT[kind]} twice, in {'/'.join(held) or '.'} and {'/'.join(folder) or '.'} "
                f"(member {member}): keep one"
            )


def _stream(member_file, out=None) -> tuple[int, str]:
    """Read ``member_file`` to its end (writing it to ``out``); its size and xxh3-128."""
    h, size = xxhash.xxh3_128(), 0
    while block := member_file.read(_BLOCK):
        h.update(block)
        size += len(block)
        if out is not None:
            out.write(block)
    return size, h.hexdigest()


def _records(dst: Path) -> dict[str, dict]:
    """The members ``PROGRESS`` records as written whole, by layout path (a torn last line is not one)."""
    records = {}
    try:
        lines = (dst / PROGRESS).read_text().splitlines()
    except FileNotFoundError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
            records[record["path"]] = record
        except (ValueError, KeyError, TypeError):
            continue
    return records


def _extract_pass(archive: Path, dst: Path, targets: _Targets, records: dict, seen: set[str]) -> int:
    """One pass over ``archive``; how many recorded members differed (removed: a second pass writes them)."""
    label, stale, where = str(archive), 0, "before its first member"
    try:
        with open(archive, "rb", buffering=0) as raw:  # a read returns what is there (a FIFO: so far)
            stream = _ZstdStream(raw)
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_StrictTarInfo, bufsize=_BLOCK) as tar:
                for member in tar:
                    where = f"in member {member.name}"
                    rel = targets.target(member, label)
                    if rel is not None:
                        path, record = dst / rel, records.get(rel)
                        if record and record["member"] == member.name and _whole(path, record, member.size):
                            if _stream(tar.extractfile(member))[1] == record["xxh3"]:
                                seen.add(rel)
                            else:  # another archive's member of the same name and size
                                path.unlink()
                                del records[rel]
                                stale += 1
                        else:
                            _write(tar, member, path, rel, dst, records, label)
                            seen.add(rel)
                    where = f"after member {member.name}"
            while stream.read(_BLOCK):  # the tar's end: the frames must end whole too
                pass
    except _Damaged as exc:
        raise ArchiveError(f"{label} is damaged {where}: {exc}") from None
    except (tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{label} is damaged {where}: {exc or type(exc).__name__}") from None
    return stale


def _whole(path: Path, record: dict, size: int) -> bool:
    return record["size"] == size and path.is_file() and path.stat().st_size == size


def _write(tar, member, path: Path, rel: str, dst: Path, records: dict, archive: str) -> None:
    """Write ``member`` to ``path``, synced, then record it in ``PROGRESS``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        size, digest = _stream(tar.extractfile(member), out)
        out.flush()
        os.fsync(out.fileno())
    if size != member.size:  # tarfile raises first; never record a short member
        raise _Damaged(f"it holds {size} of the {member.size} bytes its header gives")
    records[rel] = {"path": rel, "member": member.name, "size": size, "xxh3": digest, "archive": archive}
    with open(dst / PROGRESS, "a") as f:
        f.write(json.dumps(records[rel]) + "\n")


def extract_archives(archives: list[Path], dst: Path, taken: dict[str, str] | None = None) -> dict[str, str]:
    """Extract ``archives`` into the partial folder ``dst``, resuming what an earlier run wrote whole there.

    Files in ``dst`` that no archive holds (an earlier run's) are removed, so ``dst`` holds exactly the
    archives' parts, in the reference's layout. ``taken``: the parts (``TANTIVY``, ``FAISS``) that folders
    given beside the archives hold -> the folder; returns the parts the archives hold -> the archive.

    Raises:
        ArchiveError: a damaged or unsafe archive, or a part held twice; one line naming archive and member.
    """
    dst.mkdir(parents=True, exist_ok=True)
    records, seen, targets = _records(dst), set(), _Targets(dict(taken or {}))
    for archive in archives:
        if _extract_pass(archive, dst, targets, records, seen) and _extract_pass(
            archive, dst, targets, records, seen
        ):
            raise ArchiveError(f"{archive} changed while it was read: run the same command again")
    for path in sorted(dst.rglob("*"), reverse=True):  # an earlier run's files, and then empty folders
        rel = str(path.relative_to(dst))
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        elif rel != PROGRESS and rel not in seen:
            path.unlink()
    kept = [records[rel] for rel in sorted(seen)]
    write_text_atomically(dst / PROGRESS, "".join(json.dumps(record) + "\n" for record in kept))
    names = {str(archive) for archive in archives}
    return {kind: label for kind, (label, _) in targets.held.items() if label in names}
