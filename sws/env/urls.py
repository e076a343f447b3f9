"""Wikipedia-style URLs: building hit links (CONTRACT.md §1.9) and parsing ``open_url`` input (§2.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlparse

from sws.env.arguments import valid_text

WIKI_BASE_URL = "https://en.wikipedia.org/wiki/"
LINK_MODES = ("wikiid", "title")
INVALID_URL_MESSAGE = (
    "Invalid Wikipedia URL. Expect https://en.wikipedia.org/wiki/<wikipedia_id> or with #chunk-N."
)

_CHUNK_FRAGMENT = re.compile(r"chunk-(\d+)")


@dataclass(frozen=True, slots=True)
class WikiUrl:
    """A parsed ``open_url`` target: the decoded identifier and, for a chunk request, its 1-based number."""

    identifier: str
    chunk: int | None = None


def chunk_url(page_id: int, chunk_index: int, title: str = "", link_mode: str = "wikiid") -> str:
    """Link to chunk ``chunk_index`` (0-based) of a page: ``.../wiki/<page_id>#chunk-<index + 1>``.

    In the ``title`` link mode the identifier is the title, spaces as ``_``, percent-encoded with only ``_``
    kept safe; an empty title falls back to the page id.
    """
    slug = quote(title.strip().replace(" ", "_"), safe="_") if link_mode == "title" else ""
    return f"{WIKI_BASE_URL}{slug or page_id}#chunk-{chunk_index + 1}"


def parse_wiki_url(url: str) -> WikiUrl | None:
    """Parse as the reference does; ``None`` means invalid (answer with INVALID_URL_MESSAGE).

    Scheme and host are not checked; the path must start with ``/wiki/``; ``?query`` is ignored; only a
    fragment that is exactly ``chunk-<digits>`` with a value above 0 selects a chunk, any other means the article.
    Lone surrogates in the identifier become U+FFFD: the backend can then look it up (it cannot encode them).
    """
    try:
        parsed = urlparse(url.strip())
    except ValueError:  # e.g. an unbalanced "[" in the host
        return None
    if not parsed.path.startswith("/wiki/"):
        return None
    identifier = valid_text(unquote(parsed.path[len("/wiki/") :])).strip()
    if not identifier:
        return None
    match = _CHUNK_FRAGMENT.fullmatch(parsed.fragment.strip())
    try:
        number = int(match.group(1)) if match else 0
    except ValueError:  # more digits than Python converts: the reference then opens the article
        number = 0
    return WikiUrl(identifier, number if number > 0 else None)
