"""Small builders for synthetic dump files used by the bad-input tests."""

from __future__ import annotations

from xml.sax.saxutils import escape

HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
    "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n"
)


def page_xml(page_id: int, title: str, text: str, ns: int = 0, redirect: str | None = None) -> str:
    redirect_tag = f'    <redirect title="{escape(redirect)}" />\n' if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n{redirect_tag}"
        f"    <revision>\n      <id>{page_id * 10}</id>\n      <timestamp>2026-06-01T00:00:00Z</timestamp>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n'
    )


def dump_xml(pages: list[str]) -> str:
    return HEADER + "".join(pages) + "</mediawiki>\n"
