"""The page record every corpus step passes along, and how a raw page is classified."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DISAMBIGUATION_TEMPLATE = re.compile(
    r"\{\{\s*(?:disambiguation|disambig|disamb|dab|dis|hndis|geodis|numberdis|mathdab|hospitaldis|schooldis|"
    r"roaddis|callsigndis|letter-numbercombdisambig|species latin name disambiguation|place name disambiguation)"
    r"\s*(?:\||\}\})",
    re.IGNORECASE,
)
REDIRECT_TEXT = re.compile(r"^\s*#\s*redirect\s*:?\s*\[\[([^\]|#]*)", re.IGNORECASE)


@dataclass(slots=True)
class Page:
    """One ``<page>`` of a MediaWiki dump.

    Args:
        page_id: the numeric page id.
        title: the page title as in the dump.
        ns: the namespace number (0 for articles).
        redirect_to: the redirect target title (fragment removed), or None.
        revision_id: the revision id, or None when the dump has none.
        timestamp: the revision timestamp (ISO 8601), or None.
        text: the wikitext.
        metadata: anything a later step adds.
    """

    page_id: int
    title: str
    ns: int
    redirect_to: str | None
    revision_id: int | None
    timestamp: str | None
    text: str
    metadata: dict = field(default_factory=dict)

    @property
    def is_disambiguation(self) -> bool:
        return self.title.endswith("(disambiguation)") or bool(DISAMBIGUATION_TEMPLATE.search(self.text))


def redirect_target(redirect_attr: str | None, text: str) -> str | None:
    """The redirect target from the dump's ``<redirect title=...>`` or, in older dumps, a ``#REDIRECT`` line."""
    target = redirect_attr
    if target is None:
        match = REDIRECT_TEXT.match(text)
        target = match.group(1) if match else None
    if target is None:
        return None
    return target.split("#", 1)[0].replace("_", " ").strip() or None
