"""Streaming MediaWiki XML dump reading: plain ``.xml``, ``.xml.bz2`` and byte ranges of multistream dumps.

Nothing holds a whole dump in memory: files are parsed with lxml's ``iterparse`` as they decompress, and a
multistream dump is cut into work units of consecutive bz2 streams (from its ``-index.txt.bz2``) that
independent workers read in parallel.
"""

from __future__ import annotations

import atexit
import bz2
import io
import os
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import indexed_bzip2
from lxml import etree

from sws.corpus.pages import Page, redirect_target
from sws.corpus.xmlsource import Utf8Recoder, with_external_subset

# bz2 output bytes per read: a few blocks decoded in a row run faster than one at a time
DECODE_STEP = 1 << 22


_OPEN_DECODERS: weakref.WeakSet = weakref.WeakSet()  # indexed_bzip2 files of readers not yet finished


@atexit.register
def _close_open_decoders() -> None:
    """Close what readers left open (a reader in a reference cycle lives until the interpreter finalizes, and
    indexed_bzip2 aborts the process when one of its files is closed then)."""
    for stream in list(_OPEN_DECODERS):
        stream.close()


class DumpError(ValueError):
    """A dump input that cannot be read at all (missing file, unknown format, bad index)."""


@dataclass(frozen=True, slots=True)
class DumpUnit:
    """One unit of parallel work: a whole dump file, or bytes ``[start, end)`` of a multistream dump.

    Args:
        path: the dump file.
        start: first byte of the unit's first bz2 stream (multistream only).
        end: first byte after the unit's last stream (multistream only).
    """

    path: str
    start: int | None = None
    end: int | None = None

    @property
    def label(self) -> str:
        name = Path(self.path).name
        return name if self.start is None else f"{name}[{self.start}:{self.end}]"


def multistream_offsets(index_path: str | os.PathLike) -> list[int]:
    """The sorted distinct stream offsets listed in a multistream ``offset:page_id:title`` index."""
    offsets: set[int] = set()
    opener = bz2.open if str(index_path).endswith(".bz2") else open
    try:
        with opener(index_path, "rt", encoding="utf-8") as lines:
            for n, line in enumerate(lines, 1):
                head = line.split(":", 1)[0]
                if not head.isdigit():
                    raise DumpError(f"{index_path}: line {n} is not 'offset:page_id:title': {line[:80]!r}")
                offsets.add(int(head))
    except (OSError, EOFError) as exc:
        raise DumpError(f"cannot read multistream index {index_path}: {exc}") from exc
    if not offsets:
        raise DumpError(f"multistream index {index_path} lists no streams")
    return sorted(offsets)


def plan_units(
    paths: Iterable[str], index_paths: Iterable[str] = (), streams_per_shard: int = 20
) -> list[DumpUnit]:
    """Cut the inputs into work units: one per file, or groups of ``streams_per_shard`` streams per multistream.

    ``index_paths`` pairs with ``paths`` by position; a file without an index is one unit.
    """
    paths, index_paths = list(paths), list(index_paths)
    if len(index_paths) > len(paths):
        raise DumpError(f"{len(index_paths)} multistream indexes given for {len(paths)} dump files")
    if streams_per_shard < 1:
        raise DumpError(f"streams_per_shard must be >= 1, got {streams_per_shard}")
    units: list[DumpUnit] = []
    for i, path in enumerate(paths):
        if os.path.isdir(path):
            raise DumpError(f"dump {path} is a directory, not a dump file")
        if not os.path.isfile(path):
            raise DumpError(f"dump file not found: {path}")
        if i >= len(index_paths) or not index_paths[i]:
            units.append(DumpUnit(str(path)))
            continue
        offsets = multistream_offsets(index_paths[i])
        size = os.path.getsize(path)
        if offsets[-1] >= size:
            raise DumpError(f"index {index_paths[i]} points past the end of {path} ({offsets[-1]} >= {size})")
        starts = offsets[::streams_per_shard]
        ends = starts[1:] + [size]
        units.extend(DumpUnit(str(path), s, e) for s, e in zip(starts, ends))
    return units


class _ByteChunks(io.RawIOBase):
    """A read-only file over an iterator of byte chunks."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while not self._buffer:
            self._buffer = next(self._chunks, b"")
            if not self._buffer:
                return 0
        n = min(len(target), len(self._buffer))
        target[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n


class WikiDumpReader:
    """Streams the pages of one :class:`DumpUnit`.

    Reading never raises on bad input: a truncated or malformed dump stops the stream and leaves the reason in
    :attr:`error`; the dump's encoding is honoured (:mod:`sws.corpus.xmlsource`) and invalid sequences are
    replaced by U+FFFD and counted in :attr:`invalid_utf8`. Entities are never expanded or loaded: a reference
    other than XML's five and character references stays literal text (``&name;``), and the pages holding one
    are counted in :attr:`entity_errors`.

    Args:
        unit: the file or byte range to read.
        block_size: bytes read per step.
    """

    def __init__(self, unit: DumpUnit, block_size: int = 1 << 20) -> None:
        self.unit = unit
        self.block_size = block_size
        self.error: str | None = None
        self._recoder = Utf8Recoder()
        self.entity_errors = 0  # pages with an entity reference kept as literal text
        self.pages_started = 0  # <page> elements opened
        self.pages_malformed = 0  # closed but without a usable id or title
        self.bytes_read = 0

    @property
    def invalid_utf8(self) -> int:
        """Invalid sequences (in the input's encoding; UTF-8 for Wikimedia's dumps) replaced by U+FFFD."""
        return self._recoder.replacements

    def pages(self) -> Iterator[Page]:
        try:
            utf8 = with_external_subset(self._recoder.recode(self._until_unreadable(self._raw_chunks())))
            parser = etree.iterparse(
                io.BufferedReader(_ByteChunks(utf8), self.block_size),
                events=("start", "end"),
                tag="{*}page",
                encoding="utf-8",  # what the recoder wrote, whatever the XML declaration says
                huge_tree=True,
                resolve_entities=False,
            )
            for event, elem in parser:
                if event == "start":
                    self.pages_started += 1
                    continue
                page = _page_from_element(elem)
                has_entity = next(elem.iter(etree.Entity), None) is not None
                elem.clear()
                parent = elem.getparent()
                while parent is not None and elem.getprevious() is not None:
                    del parent[0]
                if page is None:
                    self.pages_malformed += 1
                    continue
                self.entity_errors += has_entity
                yield page
        except etree.XMLSyntaxError as exc:  # after a read error, the XML ends where the readable data does
            self.error = self.error or f"malformed or truncated XML in {self.unit.label}: {exc.msg}"
        except (EOFError, OSError, ValueError) as exc:
            self.error = f"unreadable data in {self.unit.label}: {exc}"

    def _until_unreadable(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """The chunks up to a read error, which goes to :attr:`error`: the parser still gets every page before it."""
        try:
            yield from chunks
        except (EOFError, OSError) as exc:
            self.error = f"unreadable data in {self.unit.label}: {exc}"

    def _raw_chunks(self) -> Iterator[bytes]:
        unit = self.unit
        if unit.start is not None:
            yield b"<mediawiki>"
            yield from _strip_dump_envelope(self._decompressed(unit.start, unit.end))
            yield b"</mediawiki>"
        elif unit.path.endswith(".bz2"):
            yield from self._decompressed(0, os.path.getsize(unit.path))
        else:
            with open(unit.path, "rb") as raw:
                while block := raw.read(self.block_size):
                    self.bytes_read += len(block)
                    yield block

    def _decompressed(self, start: int, end: int) -> Iterator[bytes]:
        """Decompress bytes ``[start, end)`` of a bz2 file (one or many concatenated streams) as they come.

        indexed_bzip2 decodes (a quarter faster than libbz2); when it fails or stops before ``end`` (a cut,
        corrupt block or foreign bytes after a stream), the standard library's decoder takes over where it
        stopped, so a cut file still yields everything before the cut and the error says what is wrong.
        """
        done = 0
        with open(self.unit.path, "rb") as raw:
            source = _ByteRange(raw, start, end)
            try:
                with indexed_bzip2.IndexedBzip2File(source, parallelization=1) as stream:
                    _OPEN_DECODERS.add(stream)
                    while block := stream.read(DECODE_STEP):
                        done += len(block)
                        yield block
                    complete = 0 < end - start == (stream.tell_compressed() + 7) // 8
            except (RuntimeError, ValueError):
                complete = False
        if complete:
            self.bytes_read += end - start
        else:
            yield from self._decompressed_stdlib(start, end, skip=done)

    def _decompressed_stdlib(self, start: int, end: int, skip: int) -> Iterator[bytes]:
        """The standard library's decoding of ``[start, end)``, less its first ``skip`` bytes of output."""
        with open(self.unit.path, "rb") as raw:
            raw.seek(start)
            remaining = end - start
            decompressor = bz2.BZ2Decompressor()
            while remaining > 0:
                block = raw.read(min(self.block_size, remaining))
                if not block:
                    raise EOFError("file ended inside the range to read")
                remaining -= len(block)
                self.bytes_read += len(block)
                while block:
                    if decompressor.eof:
                        decompressor = bz2.BZ2Decompressor()
                    data = decompressor.decompress(block)
                    block = decompressor.unused_data if decompressor.eof else b""
                    if skip:
                        data, skip = data[skip:], max(0, skip - len(data))
                    yield data
            if not decompressor.eof:
                raise EOFError("compressed data ended inside a bz2 stream (truncated file?)")


class _ByteRange(io.RawIOBase):
    """Bytes ``[start, end)`` of an open file as a seekable file of their own (no ``fileno``: the decoder must
    read through it)."""

    def __init__(self, raw, start: int, end: int) -> None:
        self._raw = raw
        self._start = start
        self._size = end - start
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, target) -> int:
        n = max(0, min(len(target), self._size - self._pos))
        self._raw.seek(self._start + self._pos)
        n = self._raw.readinto(memoryview(target)[:n])
        self._pos += n
        return n


def _strip_dump_envelope(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Drop the ``<mediawiki><siteinfo>…`` header and the ``</mediawiki>`` trailer from a range's streams."""
    head = b""
    for chunk in chunks:
        if head is not None:
            head += chunk
            if b"<page" not in head and b"</mediawiki" not in head and len(head) < 1 << 22:
                continue
            if b"<mediawiki" in head[:4096]:
                cut = head.find(b"<page")
                head = head[cut:] if cut >= 0 else b""
            chunk, head = head, None
        yield chunk.replace(b"</mediawiki>", b"")
    if head:
        yield head.replace(b"</mediawiki>", b"")


def _child_text(elem, name: str) -> str | None:
    """The text of the child ``name``, entity references spelled out as ``&name;`` and the text after a comment
    kept; None without the child."""
    child = _child(elem, name)
    if child is None:
        return None
    parts = [child.text or ""]
    for node in child:  # entity references, comments, processing instructions
        parts += [node.text if node.tag is etree.Entity else "", node.tail or ""]
    return "".join(parts)


def _child(elem, name: str):
    for child in elem:
        if isinstance(child.tag, str) and etree.QName(child).localname == name:
            return child
    return None


def _page_from_element(elem) -> Page | None:
    title, page_id, ns = _child_text(elem, "title"), _child_text(elem, "id"), _child_text(elem, "ns")
    if title is None or page_id is None or not page_id.strip().isdigit():
        return None
    revision = _child(elem, "revision")
    text = revision_id = timestamp = None
    if revision is not None:
        text = _child_text(revision, "text")
        rid = _child_text(revision, "id")
        revision_id = int(rid) if rid and rid.strip().isdigit() else None
        timestamp = _child_text(revision, "timestamp")
    redirect = _child(elem, "redirect")
    text = text or ""
    return Page(
        page_id=int(page_id),
        title=title,
        ns=int(ns) if ns and ns.strip().lstrip("-").isdigit() else 0,
        redirect_to=redirect_target(redirect.get("title") if redirect is not None else None, text),
        revision_id=revision_id,
        timestamp=timestamp,
        text=text,
    )
