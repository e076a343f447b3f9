"""What the XML parser reads of a dump: its bytes as valid UTF-8, with a prolog that tolerates unknown entities.

The encoding is found as the XML specification says (appendix F): a byte order mark, else the pattern of the
first bytes (UTF-16/32 without a mark), else the XML declaration's ``encoding``, else UTF-8. Sequences that are
invalid in that encoding are replaced by U+FFFD and counted, so one bad byte costs one character.

A document without a DTD that uses an entity it never declares is not well-formed (XML 1.0 §4.1, "Entity
Declared"): the parser would stop there and lose the rest of the dump. Giving the prolog an external DTD
subset, which is never loaded, turns such references into entity nodes that the reader keeps as literal text.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterator

BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
UNMARKED = (
    (b"<\0\0\0", "utf-32-le"),
    (b"\0\0\0<", "utf-32-be"),
    (b"<\0?\0", "utf-16-le"),
    (b"\0<\0?", "utf-16-be"),
)
DECLARED_ENCODING = re.compile(rb"<\?xml[^>]*?\sencoding\s*=\s*[\"']([A-Za-z][\w.-]*)[\"']")
HEAD_BYTES = 1024  # enough for a byte order mark and an XML declaration
ROOT = re.compile(rb"<([A-Za-z_:][^\s/>]*)")
DOCTYPE = re.compile(rb"<!DOCTYPE\s+[^\s\[>]+(\s+(?:SYSTEM|PUBLIC)\b)?")
NEVER_LOADED = b' SYSTEM "sws:never-loaded"'  # the parser runs without load_dtd and without network
PROLOG_LIMIT = 1 << 22


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """The codec of an XML document that starts with ``head``, and the length of its byte order mark.

    Raises:
        ValueError: the XML declaration names an encoding Python does not know.
    """
    for mark, codec in BOMS:
        if head.startswith(mark):
            return codec, len(mark)
    for pattern, codec in UNMARKED:
        if head.startswith(pattern):
            return codec, 0
    declared = DECLARED_ENCODING.match(head)
    if declared:
        name = declared.group(1).decode("ascii")
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            raise ValueError(f"unknown encoding {name!r} in the XML declaration") from None
        if (
            "<?xml".encode(codec) == b"<?xml"
        ):  # else the declaration contradicts the bytes: they read as UTF-8
            return codec, 0
    return "utf-8", 0


class Utf8Recoder:
    """Re-encodes an XML byte stream in its own encoding as valid UTF-8, counting replaced sequences."""

    def __init__(self) -> None:
        self.encoding: str | None = None
        self.replacements = 0

    def recode(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        head = b""
        for chunk in chunks:
            head += chunk
            if len(head) >= HEAD_BYTES:
                break
        self.encoding, mark = sniff_encoding(head)
        yield from self._decoded(itertools.chain([head[mark:]], chunks))

    def _decoded(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        strict = codecs.getincrementaldecoder(self.encoding)(errors="strict")
        lenient = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        passthrough = self.encoding == "utf-8"  # then valid input goes out as it came
        for chunk in chunks:
            pending = strict.getstate()[0]
            try:
                text = strict.decode(chunk)
            except UnicodeDecodeError:
                data = pending + chunk
                lenient.setstate(strict.getstate())
                text = lenient.decode(chunk)  # an incomplete sequence at the end waits for the next chunk
                strict.setstate(lenient.getstate())
                self.replacements += text.count("\ufffd") - data.decode(self.encoding, "ignore").count(
                    "\ufffd"
                )
            else:
                if passthrough:  # the bytes decoded: all but an incomplete sequence kept for the next chunk
                    data = pending + chunk
                    yield data[: len(data) - len(strict.getstate()[0])]
                    continue
            yield text.encode("utf-8")
        if strict.getstate()[0]:
            self.replacements += 1
            yield "\ufffd".encode()


def with_external_subset(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The stream with a never-loaded external DTD subset in its prolog (added to a DOCTYPE without one)."""
    head = b""
    for chunk in chunks:
        head += chunk
        root = ROOT.search(head)
        if root or len(head) > PROLOG_LIMIT:
            yield _patched_prolog(head, root)
            break
    else:
        yield head
    yield from chunks


def _patched_prolog(head: bytes, root: re.Match | None) -> bytes:
    doctype = DOCTYPE.search(head)
    if doctype and (root is None or doctype.start() < root.start()):
        at = doctype.end()
        return head if doctype.group(1) else head[:at] + NEVER_LOADED + head[at:]
    if root is None:
        return head
    at = root.start()
    return head[:at] + b"<!DOCTYPE " + root.group(1) + NEVER_LOADED + b">" + head[at:]
