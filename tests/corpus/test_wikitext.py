"""Wikitext -> Markdown: golden real articles, the rules one by one, and pathological pages."""

import re
from pathlib import Path

import pytest

from sws.config import CleanConfig
from sws.corpus import wikitext
from sws.corpus.dump import DumpUnit, WikiDumpReader
from sws.corpus.wikitext import SPACES, WikitextConverter

GOLDEN = Path(__file__).parent.parent / "data" / "golden"
RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|\{\||\|-|'''")
GOLDEN_PAGES = {  # golden file -> (sample, title): infobox, tables, nested sections, lists
    "big_page.md": ("dumpster-dive_tinywiki-pages-articles.xml", "Big Page"),
    "hello.md": ("dumpster-dive_tinywiki-pages-articles.xml", "Hello"),
    "brahui_language.md": ("gensim_enwiki-table-markup.xml.bz2", "Brahui language"),
    "economy_of_estonia.md": ("gensim_enwiki-table-markup.xml.bz2", "Economy of Estonia"),
    "actrius.md": ("enwiki-sample.xml.bz2", "Actrius"),
}


@pytest.fixture(scope="module")
def converter():
    return WikitextConverter(drop_sections=CleanConfig().drop_sections)


def convert(converter, text, timestamp="2020-01-01T00:00:00Z"):
    return converter.convert("T", text, timestamp).markdown


def _page(samples, name, title):
    path = next(p for p in samples if p.name == name)
    return next(p for p in WikiDumpReader(DumpUnit(str(path))).pages() if p.title == title)


@pytest.mark.parametrize("golden", sorted(GOLDEN_PAGES))
def test_golden_articles(golden, converter, wiki_samples):
    page = _page(wiki_samples, *GOLDEN_PAGES[golden])
    doc = converter.convert(page.title, page.text, page.timestamp)
    assert doc.converter == "markdown"
    assert doc.markdown + "\n" == (GOLDEN / golden).read_text()


def test_no_residual_markup_on_real_samples(converter, wiki_samples):
    lines = bad = 0
    for path in wiki_samples:
        for page in WikiDumpReader(DumpUnit(str(path))).pages():
            if page.ns == 0 and not page.redirect_to:
                for line in converter.convert(page.title, page.text, page.timestamp).markdown.split("\n"):
                    lines += 1
                    bad += bool(RESIDUE.search(line))
    assert lines > 20_000 and bad / lines < 0.001


def test_sections_numbered_and_reference_sections_dropped(converter):
    text = (
        "Lead.\n== A ==\nx\n=== A1 ===\ny\n==== A1a ====\nz\n== References ==\nr\n=== Sub ===\ns\n== B ==\nb"
    )
    assert convert(converter, text) == (
        "Section 0: Preamble\nLead.\n\nSection 1: A\nx\n\nSection 1.1: A1\ny\n\nSection 1.1.1: A1a\nz\n\n"
        "Section 2: B\nb"
    )


def test_empty_sections_dropped_but_parents_of_content_kept(converter):
    text = "== Gallery ==\n<gallery>a.jpg</gallery>\n== History ==\n=== Early ===\ntext"
    assert convert(converter, text) == "Section 1: History\n\nSection 1.1: Early\ntext"


def test_links_templates_refs_comments(converter):
    text = (
        "'''Ada''' ([[Help:IPA|x]]{{IPAc-en|a}}) was [[Foo (bar)|]] [[baz]]s [[w|label]]<ref name=a>cite</ref>"
        "<ref name=b/><!-- hidden -->[[File:X.jpg|thumb|A [[caption]]]][[Category:C]][[de:Ada]] "
        "[https://example.org Site] [https://bare.example] {{cn}}{{nowrap|kept}}&nbsp;&amp;"
    )
    assert convert(converter, text) == "Section 0: Preamble\nAda (x) was Foo bazs label Site kept &"


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("{{birth date and age|1950|3|4}}", "4 March 1950 (age 69)"),
        ("{{birth date|1950|3|4|mf=y}}", "March 4, 1950"),
        ("{{death date and age|2000|1|2|1950|3|4}}", "2 January 2000 (aged 49)"),
        ("{{convert|5|km|mi}}", "5 km"),
        ("{{convert|5|-|7|km}}", "5–7 km"),
        ("{{lang|fr|bonjour}}", "bonjour"),
        ("{{lang-de|Guten Tag}}", "Guten Tag"),
        ("{{nihongo|Tokyo|東京|Tōkyō}}", "Tokyo (東京, Tōkyō)"),
        ("{{circa|1500}}", "c. 1500"),
        ("{{hlist|a|b|c}}", "a, b, c"),
        ("{{marriage|B|1970|1980}}", "B (m. 1970–1980)"),
        ("a{{ndash}}b", "a–b"),
        ("{{frac|1|2}}", "1/2"),
        ("{{Navbox|name=x|list1=[[a]]}}", ""),
        ("{{#if:x|y|z}}", ""),
    ],
)
def test_inline_templates(converter, template, text):
    assert convert(converter, f"x {template} y") == f"Section 0: Preamble\nx {text} y".replace("  ", " ")


def test_infobox_table_in_preamble(converter):
    text = "{{Infobox person\n| name = Ada\n| image = Ada.jpg\n| born = {{birth date|1815|12|10}}\n| spouse = [[William King|King]]<br>Other\n}}\nAda was a mathematician."
    assert convert(converter, text) == (
        "Section 0: Preamble\n| Infobox person | |\n| --- | --- |\n| name | Ada |\n| born | 10 December 1815 |\n"
        "| spouse | King; Other |\n\nAda was a mathematician."
    )
    no_infobox = WikitextConverter(infobox=False)
    assert no_infobox.convert("T", text).markdown == "Section 0: Preamble\nAda was a mathematician."


def test_tables_become_pipe_tables(converter):
    text = (
        '{| class="wikitable"\n|+ Caption\n! Year !! Title\n|-\n| 1990 || [[Film|The film]]\n|-\n'
        '| style="x" | 1991\n| Second <br> line\n|-\n| 1992 || a {{!}} b\n|}'
    )
    assert convert(converter, text) == (
        "Section 0: Preamble\nCaption\n| Year | Title |\n| --- | --- |\n| 1990 | The film |\n"
        "| 1991 | Second line |\n| 1992 | a \\| b |"
    )


def test_lists(converter):
    assert convert(converter, "* a\n** b\n# c\n; term : def\n: indented") == (
        "Section 0: Preamble\n- a\n  - b\n1. c\nterm: def\nindented"
    )


@pytest.mark.parametrize(
    "text",
    [
        "{{" * 2000 + "x" + "}}" * 1000,  # unbalanced {{
        "{{a|" * 100_000 + "}}" * 100_000,  # deeply nested templates
        "{|\n| a\n|-\n| b\n" * 500,  # unclosed tables
        "[[" * 50_000 + "x",
        "<ref>" * 200_000 + "text",  # a regex <ref>.*?</ref> is quadratic in them: ~30 min
        "'''" * 100_000,
        "== " * 10_000 + "\n",
    ],
)
@pytest.mark.timeout(120)  # a hang guard only (an endless loop, exponential blow-up): the slowest takes ~5 s
def test_pathological_pages_end_without_exceptions(text):
    """The converter itself gets through each (no page budget to fall back on: the outcome is the same at
    any speed), without markup left over."""
    converter = WikitextConverter(drop_sections=CleanConfig().drop_sections, page_timeout_s=float("inf"))
    doc = converter.convert("T", text, None)
    assert doc.converter == "markdown"
    assert not RESIDUE.search(doc.markdown)


@pytest.mark.timeout(120)  # a hang guard only: about 10 s on the 2-core dev VM
def test_five_megabyte_page_of_nested_templates_falls_back():
    """Over ``max_page_chars`` the page goes straight to the plain-text fallback: with no time budget at
    all (``page_timeout_s=0``) the reason is still the size, so the parse was never tried."""
    converter = WikitextConverter(max_page_chars=3_000_000, page_timeout_s=0.0)
    text = ("{{Infobox|a={{nowrap|{{lang|fr|x " * 20 + "}}" * 60 + "\n") * 20_000
    assert len(text) > 5_000_000
    doc = converter.convert("Huge", text, None)
    assert doc.converter.startswith("plaintext-fallback:too large")


def test_timeout_falls_back_to_plain_text():
    converter = WikitextConverter(page_timeout_s=0.0)
    doc = converter.convert("T", "'''Bold''' [[link|label]] {{cn}} text\n== S ==\nmore", None)
    assert doc.converter.startswith("plaintext-fallback:timeout")
    assert doc.markdown == "Section 0: Preamble\nBold label text\n\nSection 1: S\nmore"


def test_output_is_nfc(converter):
    assert convert(converter, "Cafe\u0301") == "Section 0: Preamble\nCafé"


@pytest.mark.parametrize(
    ("wikitext", "markdown"),
    [
        ("He used ''A Modest Proposal'''s satire.", "He used A Modest Proposal's satire."),
        ("'''Bold''' and ''it'' and '''''both'''''", "Bold and it and both"),
        ("a ''''b''' c\n\nx ''y''", "a 'b c\n\nx y"),  # four quotes: an apostrophe, then bold
        ("(${{formatnum:{{Inflation|US|800|1861}}}} now) {{formatnum:1234567}}", "($ now) 1,234,567"),
        (
            '{|\n! A !! B\n|-\n| a ||bgcolor="pink"|{{SimpleNuclide2|lithium|6}}\n|}',
            "| A | B |\n| --- | --- |\n| a | |",
        ),
        ("years 1826<br/ >1861", "years 1826\n1861"),
        ("[[x|named]] {{IPAc-en|a}}, plural", "named, plural"),
    ],
)
def test_regressions_found_against_wikiextractor(converter, wikitext, markdown):
    assert convert(converter, wikitext) == "Section 0: Preamble\n" + markdown


OLD_SPACES = re.compile(r"(?<=\S)[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")  # the plain form


@pytest.mark.parametrize(
    "text",
    [
        "a b",
        "a  b",
        "a\tb",
        "a \t\u00a0b",
        " lead",
        "\t lead",
        "end ",
        "a\u3000",
        "x\n  - y",
        "a \u2009 , b",
        "",
    ],
)
def test_space_runs_collapse_as_the_plain_pattern(text):
    assert SPACES.sub(" ", text) == OLD_SPACES.sub(" ", text)


@pytest.mark.parametrize(
    "text",
    [
        "a b",
        "a  b",
        "a\tb",
        "a\u200b b",
        "a \u200b b",
        "x\u00a0y",
        "\u00e9 b",
        "\u00e9  b",
        "a\u3000\u3000b",
        "",
    ],
)
def test_guarded_space_cleanup_matches_the_unguarded_patterns(text):
    assert wikitext._collapse_spaces(text) == SPACES.sub(" ", wikitext.ZERO_WIDTH.sub("", text))


@pytest.mark.parametrize(
    ("text", "tidy"),
    [
        ("f ( ) x", "f x"),
        ("f (or; and) x", "f x"),
        ("f(,)", "f"),
        ("f (a) ( )", "f (a)"),
        ("( ( ))", "()"),
        ("f (", "f ("),
        ("a\n\n\n\nb\n\nc", "a\n\nb\n\nc"),
    ],
)
def test_tidy_drops_empty_parentheses_and_blank_line_runs(text, tidy):
    assert wikitext._tidy(text) == tidy
