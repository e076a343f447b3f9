"""Dump reading: every sample format, multistream ranges, and bad input ending as a recorded error."""

import bz2
import codecs
import itertools
import random
import subprocess
import sys
from collections import Counter

import pytest

from sws.corpus.dump import DumpError, DumpUnit, WikiDumpReader, multistream_offsets, plan_units
from sws.corpus.multistream import pack_multistream
from sws.corpus.xmlsource import HEAD_BYTES, Utf8Recoder
from tests.corpus.helpers import dump_xml, page_xml

EXPECTED = {  # pages, redirects (<redirect> elements or #REDIRECT text), other namespaces; None: not pinned
    "camchenry_enwiki-10k.xml.bz2": (196, 97, None),
    "camchenry_enwiki-articles-partial.xml": (11, 4, None),
    "camchenry_simplewiki.xml": (7, 0, None),
    "dumpster-dive_tinywiki-pages-articles.xml": (8, 1, 0),
    "gensim_enwiki-table-markup.xml.bz2": (5, 0, 0),
    "wikipedia2vec_enwiki-pages-articles-sample.xml.bz2": (3, 1, 0),
    "enwiki-sample.xml.bz2": (206, 100, 1),
}


def _raw_page_count(path):
    opener = bz2.open if path.name.endswith(".bz2") else open
    with opener(path, "rb") as f:
        return f.read().count(b"<page>")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_samples_read_completely(name, wiki_samples):
    path = next(p for p in wiki_samples if p.name == name)
    reader = WikiDumpReader(DumpUnit(str(path)))
    pages = list(reader.pages())
    n_pages, n_redirects, n_other = EXPECTED[name]
    assert reader.error is None
    assert (len(pages), reader.pages_started) == (n_pages, n_pages)
    assert n_pages == _raw_page_count(path)
    assert sum(p.redirect_to is not None for p in pages) == n_redirects
    if n_other is not None:
        assert sum(p.ns != 0 for p in pages) == n_other
    assert all(p.title and p.revision_id and p.timestamp for p in pages)


def test_redirect_targets_and_disambiguation(wiki_samples):
    path = next(p for p in wiki_samples if p.name == "enwiki-sample.xml.bz2")
    pages = {p.title: p for p in WikiDumpReader(DumpUnit(str(path))).pages()}
    assert pages["AccessibleComputing"].redirect_to == "Computer accessibility"
    assert pages["Austin (disambiguation)"].is_disambiguation
    assert not pages["Anarchism"].is_disambiguation


def test_multistream_ranges_match_plain_file(tmp_path, wiki_samples):
    source = next(p for p in wiki_samples if p.name == "enwiki-sample.xml.bz2")
    dump, index, n = pack_multistream(source, tmp_path / "x-multistream.xml.bz2", pages_per_stream=10)
    units = plan_units([str(dump)], [str(index)], streams_per_shard=4)
    assert n == 206 and len(units) == 6
    assert units[0].start > 0 and units[-1].end == dump.stat().st_size
    ranged = []
    for unit in units:
        reader = WikiDumpReader(unit)
        ranged.extend(reader.pages())
        assert reader.error is None
    plain = list(WikiDumpReader(DumpUnit(str(source))).pages())
    assert [(p.page_id, p.title, p.text, p.redirect_to) for p in ranged] == [
        (p.page_id, p.title, p.text, p.redirect_to) for p in plain
    ]
    with bz2.open(index, "rt") as lines:
        index_lines = lines.read().splitlines()
    assert len(index_lines) == 206 and index_lines[0].split(":", 2)[1:] == ["10", "AccessibleComputing"]


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _read(path, block_size=1 << 20):
    reader = WikiDumpReader(DumpUnit(path), block_size)
    return reader, list(reader.pages())


def test_truncated_bz2_keeps_earlier_pages_and_records_error(tmp_path):
    words = random.Random(0).choices(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"], k=300_000)
    xml = dump_xml(
        [page_xml(i, f"Page {i}", " ".join(words[i * 2000 : (i + 1) * 2000])) for i in range(1, 150)]
    )
    data = bz2.compress(xml.encode())
    cut = data[: len(data) * 4 // 5]  # inside bz2 block 2
    reader, pages = _read(_write(tmp_path, "cut.xml.bz2", cut))
    assert reader.error and "cut.xml.bz2" in reader.error
    assert 0 < len(pages) < 149
    assert reader.pages_started >= len(pages)
    decodable = bz2.BZ2Decompressor().decompress(cut)  # every complete block, the standard library's reading
    assert len(pages) == decodable.count(b"</page>")


def _streams(tmp_path, n_pages=60, per_stream=20):
    """The bz2 streams of a multistream dump of ``n_pages`` pages, ``per_stream`` pages a stream."""
    words = random.Random(1).choices(["north", "south", "east", "west", "river", "hill"], k=n_pages * 3000)
    pages = [page_xml(i, f"Page {i}", " ".join(words[i * 3000 : (i + 1) * 3000])) for i in range(n_pages)]
    plain = tmp_path / "plain.xml"
    plain.write_text(dump_xml(pages))
    dump, index, _ = pack_multistream(plain, tmp_path / "m-multistream.xml.bz2", pages_per_stream=per_stream)
    offsets = multistream_offsets(index)
    data = dump.read_bytes()
    bounds = [0, *offsets, len(data)]  # the header has a stream of its own, before the first page's
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize(
    "damage, kept",
    [
        ("foreign bytes between streams", 40),
        ("a corrupt byte in stream 2", 20),
        ("file cut inside stream 2", 20),
    ],
)
def test_damaged_multistream_keeps_what_precedes_the_damage(tmp_path, damage, kept):
    header, s1, s2, *s3 = _streams(tmp_path)
    if damage == "foreign bytes between streams":
        data = header + s1 + s2 + b"not bz2 at all" + b"".join(s3)
    elif damage == "a corrupt byte in stream 2":
        bad = bytearray(s2)
        bad[len(bad) // 2] ^= 0xFF
        data = header + s1 + bytes(bad) + b"".join(s3)
    else:
        data = header + s1 + s2[: len(s2) // 2]
    path = _write(tmp_path, "damaged.xml.bz2", data)
    streams = DumpUnit(path, len(header), len(data))  # the page streams as one range, as a shard reads them
    for unit in (DumpUnit(path), streams):
        reader = WikiDumpReader(unit)
        pages = list(reader.pages())
        assert reader.error and "damaged.xml.bz2" in reader.error, unit
        assert [p.title for p in pages] == [f"Page {i}" for i in range(kept)], unit


def test_dump_cut_inside_a_page(tmp_path):
    xml = dump_xml([page_xml(1, "One", "first"), page_xml(2, "Two", "second " * 50)])
    cut = xml[: xml.index("second") + 20]
    reader, pages = _read(_write(tmp_path, "cut.xml", cut.encode()))
    assert [p.title for p in pages] == ["One"]
    assert reader.pages_started == 2 and reader.error.startswith("malformed or truncated XML")


@pytest.mark.parametrize("block_size", [1 << 20, 5, 1])
def test_invalid_utf8_is_replaced_and_counted(tmp_path, block_size):
    xml = dump_xml([page_xml(1, "Bytes", "good text BAD more text, déjà vu")]).encode()
    xml = xml.replace(b"BAD", b"\xff\xfe\xc3")
    reader, pages = _read(_write(tmp_path, "bad.xml", xml), block_size)
    assert reader.error is None and reader.invalid_utf8 == 3
    assert pages[0].text == "good text \ufffd\ufffd\ufffd more text, déjà vu"


@pytest.mark.parametrize("pad", ["", " "])
def test_invalid_byte_before_a_character_cut_between_reads(tmp_path, pad):
    xml = dump_xml([page_xml(1, "Bytes", f"{pad}BAD")]).encode().replace(b"BAD", b"\xff\xc3\xa9")
    reader, pages = _read(_write(tmp_path, "bad.xml", xml), block_size=2)  # one pad puts \xff\xc3 in one read
    assert reader.invalid_utf8 == 1 and pages[0].text == f"{pad}\ufffdé"


PAGES = [page_xml(1, "Zürich", "Grüße aus Zürich — 東京 😀 & <b>"), page_xml(2, "Bern", "Bern")]
DECLARATION = '<?xml version="1.0" encoding="{}"?>\n'


@pytest.mark.parametrize(
    "name, data",
    [
        ("utf-16 with a byte order mark", dump_xml(PAGES).encode("utf-16")),
        ("utf-16 declared", (DECLARATION.format("UTF-16") + dump_xml(PAGES)).encode("utf-16")),
        (
            "utf-16be declared",
            codecs.BOM_UTF16_BE + (DECLARATION.format("utf-16") + dump_xml(PAGES)).encode("utf-16-be"),
        ),
        (
            "utf-8 with a byte order mark",
            codecs.BOM_UTF8 + (DECLARATION.format("UTF-8") + dump_xml(PAGES)).encode(),
        ),
        (
            "latin-1 declared",
            (DECLARATION.format("ISO-8859-1") + dump_xml(PAGES)).encode("latin-1", "xmlcharrefreplace"),
        ),
    ],
)
@pytest.mark.parametrize("block_size", [1 << 20, 7])
def test_encodings_follow_the_byte_order_mark_or_declaration(tmp_path, name, data, block_size):
    _, utf8 = _read(_write(tmp_path, "utf8.xml", dump_xml(PAGES).encode()))
    reader, pages = _read(_write(tmp_path, "dump.xml", data), block_size)
    assert reader.error is None and reader.invalid_utf8 == 0
    assert [(p.title, p.text) for p in pages] == [(p.title, p.text) for p in utf8]
    assert pages[0].text == "Grüße aus Zürich — 東京 😀 & <b>"
    reader, pages = _read(_write(tmp_path, "dump.xml.bz2", bz2.compress(data)))
    assert [(p.title, p.text) for p in pages] == [(p.title, p.text) for p in utf8]


def test_text_after_an_xml_comment_is_kept(tmp_path):
    xml = dump_xml([page_xml(1, "Notes", "before NOTE after")]).replace("NOTE", "<!-- a note --><?pi x?>")
    reader, pages = _read(_write(tmp_path, "comment.xml", xml.encode()))
    assert reader.error is None and pages[0].text == "before  after"


def test_unknown_declared_encoding_is_an_input_error(tmp_path):
    reader, pages = _read(
        _write(tmp_path, "d.xml", (DECLARATION.format("x-nope") + dump_xml(PAGES)).encode())
    )
    assert pages == [] and "unknown encoding 'x-nope'" in reader.error


def test_entities_are_kept_literally_never_resolved_and_counted(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    xml = dump_xml(
        [
            page_xml(1, "A", "first"),
            page_xml(2, "XXE", "Before the secret. XXE After."),
            page_xml(3, "C", "c"),
        ]
    )
    xml = xml.replace("XXE", "&xxe;")
    external = f'<!DOCTYPE mediawiki [<!ENTITY xxe SYSTEM "{secret.as_uri()}">]>\n'
    for name, data in [("undeclared.xml", xml), ("external.xml", external + xml)]:
        reader, pages = _read(_write(tmp_path, name, data.encode()))
        assert reader.error is None and reader.entity_errors == 1
        assert [(p.title, p.text) for p in pages] == [
            ("A", "first"),
            ("&xxe;", "Before the secret. &xxe; After."),
            ("C", "c"),
        ]
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = f'<!DOCTYPE mediawiki [<!ENTITY l0 "lol">{laughs}]>\n' + xml.replace("&xxe;", "&l9;")
    reader, pages = _read(_write(tmp_path, "laughs.xml", bomb.encode()))
    assert [p.title for p in pages] == ["A"] and "amplification" in reader.error  # refused, not expanded


def test_empty_and_malformed_inputs(tmp_path):
    reader, pages = _read(_write(tmp_path, "empty.xml", b""))
    assert pages == [] and reader.error
    reader, pages = _read(_write(tmp_path, "nopages.xml", dump_xml([]).encode()))
    assert pages == [] and reader.error is None
    no_id = dump_xml([page_xml(1, "Ok", "fine")]).replace("<id>1</id>", "<id>x</id>", 1)
    reader, pages = _read(_write(tmp_path, "noid.xml", no_id.encode()))
    assert pages == [] and reader.pages_malformed == 1


def test_missing_file_and_bad_index(tmp_path):
    with pytest.raises(DumpError, match="not found"):
        plan_units([str(tmp_path / "missing.xml")])
    with pytest.raises(DumpError, match="is a directory"):
        plan_units([str(tmp_path)])
    dump = _write(tmp_path, "d.xml.bz2", bz2.compress(dump_xml([]).encode()))
    index = _write(tmp_path, "i.txt.bz2", bz2.compress(b"not an index\n"))
    with pytest.raises(DumpError, match="offset:page_id:title"):
        plan_units([dump], [index])
    index = _write(tmp_path, "j.txt.bz2", bz2.compress(b"99999999:1:X\n"))
    with pytest.raises(DumpError, match="past the end"):
        plan_units([dump], [index])


def test_namespaces_counted(wiki_samples):
    path = next(p for p in wiki_samples if p.name == "camchenry_enwiki-10k.xml.bz2")
    namespaces = Counter(p.ns for p in WikiDumpReader(DumpUnit(str(path))).pages())
    assert namespaces[0] > 0 and sum(namespaces.values()) == 196 and set(namespaces) - {0}


def test_valid_utf8_comes_out_unchanged_wherever_the_reads_cut_it():
    data = ("<a>" + "x" * HEAD_BYTES + "Grüße aus 東京 😀</a>").encode()
    for cut in range(HEAD_BYTES, len(data) + 1):  # past the head that is read whole
        recoder = Utf8Recoder()
        assert b"".join(recoder.recode(iter([data[:HEAD_BYTES], data[HEAD_BYTES:cut], data[cut:]]))) == data
        assert recoder.replacements == 0


def test_a_reader_left_open_at_exit_ends_the_interpreter_cleanly(tmp_path):
    """indexed_bzip2 aborts the process when one of its files is closed while the interpreter finalizes, which
    is when a reader kept in a reference cycle would be: the readers' files are closed before."""
    pages = [page_xml(i, f"Page {i}", "word " * 2000) for i in range(1, 300)]  # more than one read's worth
    path = _write(tmp_path, "d.xml.bz2", bz2.compress(dump_xml(pages).encode()))
    script = (
        "from sws.corpus.dump import DumpUnit, WikiDumpReader\n"
        "class Holder: pass\n"
        "held = Holder()\n"
        "held.me = held\n"  # a cycle: only the garbage collector frees it
        f"held.pages = WikiDumpReader(DumpUnit({path!r})).pages()\n"
        "print(next(held.pages).title)\n"  # the generator, and the decoder inside it, stay open
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout.strip()) == (0, "Page 1"), done.stderr
