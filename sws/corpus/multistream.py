"""Re-pack any MediaWiki XML dump the way Wikimedia packs ``pages-articles-multistream``.

The output is a ``.xml.bz2`` made of independent bz2 streams (the ``<mediawiki><siteinfo>`` header, then
``pages_per_stream`` pages per stream, then the ``</mediawiki>`` trailer) plus a ``-index.txt.bz2`` of
``offset:page_id:title`` lines, so tests and benchmarks exercise the real parallel format.
"""

from __future__ import annotations

import bz2
import html
import re
from collections.abc import Iterator
from pathlib import Path

PAGE_ID = re.compile(rb"<id>\s*(\d+)\s*</id>")
PAGE_TITLE = re.compile(rb"<title>(.*?)</title>", re.DOTALL)


def _dump_lines(path: str | Path) -> Iterator[bytes]:
    opener = bz2.open if str(path).endswith(".bz2") else open
    with opener(path, "rb") as raw:
        yield from raw


def _split_dump(path: str | Path) -> tuple[bytes, Iterator[bytes], list[bytes]]:
    """Header bytes, an iterator of page blocks, and (filled once pages are consumed) the trailer."""
    lines = _dump_lines(path)
    header = bytearray()
    trailer: list[bytes] = []
    first_page: list[bytes] = []
    for line in lines:
        if line.lstrip().startswith(b"<page"):
            first_page.append(line)
            break
        header += line

    def pages() -> Iterator[bytes]:
        block = bytearray(b"".join(first_page))
        in_page = bool(first_page)
        for line in lines:
            if in_page:
                block += line
                if b"</page>" in line:
                    yield bytes(block)
                    block.clear()
                    in_page = False
            elif line.lstrip().startswith(b"<page"):
                block += line
                in_page = True
            else:
                trailer.append(line)
        if in_page and block:
            yield bytes(block)

    return bytes(header), pages(), trailer


def pack_multistream(
    source: str | Path, out_dump: str | Path, out_index: str | Path | None = None, pages_per_stream: int = 100
) -> tuple[Path, Path, int]:
    """Write ``out_dump`` (multistream bz2) and its index; returns both paths and the number of pages packed."""
    out_dump = Path(out_dump)
    out_index = (
        Path(out_index)
        if out_index
        else out_dump.with_name(out_dump.name.replace(".xml.bz2", "") + "-index.txt.bz2")
    )
    header, pages, trailer = _split_dump(source)
    n_pages = 0
    with open(out_dump, "wb") as dump, bz2.open(out_index, "wt", encoding="utf-8") as index:
        dump.write(bz2.compress(header))
        group: list[bytes] = []

        def flush() -> None:
            offset = dump.tell()
            for block in group:
                page_id = PAGE_ID.search(block)
                title = PAGE_TITLE.search(block)
                index.write(
                    f"{offset}:{page_id.group(1).decode() if page_id else 0}:"
                    f"{html.unescape(title.group(1).decode('utf-8', 'replace')) if title else ''}\n"
                )
            dump.write(bz2.compress(b"".join(group)))
            group.clear()

        for block in pages:
            group.append(block)
            n_pages += 1
            if len(group) == pages_per_stream:
                flush()
        if group:
            flush()
        dump.write(bz2.compress(b"".join(trailer) or b"</mediawiki>\n"))
    return out_dump, out_index, n_pages
