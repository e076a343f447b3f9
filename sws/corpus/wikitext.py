"""Wikitext -> lightweight Markdown with numbered section lines.

A page becomes a :class:`Document`: ``Section 0: Preamble`` (the lead, with the infobox as a key/value table
on top), then ``Section <n>: <heading>`` for each section, dotted numbers for subsections (``Section 2.1:``).
Tables become Markdown pipe tables, links keep their labels, references, comments, files, categories and
templates go, except the content-bearing inline templates of :mod:`sws.corpus.templates`. Sections on the
drop list (References, External links, ...) go with their subsections. Output is NFC.

:meth:`WikitextConverter.convert` never raises: a page over its time budget or size limit, or one the
converter fails on, gets a plain-text fallback and says why in ``Document.converter``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date

from sws.corpus import markup
from sws.corpus.markup import Deadline, PageTimeout
from sws.corpus.tables import convert_tables
from sws.corpus.templates import TemplateCall, is_rendered, normalise_name, render_template

HEADING = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*\1[ \t]*$", re.MULTILINE)
EXTERNAL_LINK = re.compile(r"\[(?:https?:|ftp:|mailto:)?//[^\s\]]*(?:[ \t]+([^\]\n]*))?\]")
DROPPED_NAMESPACES = re.compile(r"^\s*(?:file|image|media|category|imagen|datei|fichier)\s*:", re.IGNORECASE)
INTERLANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8})*\s*:", re.IGNORECASE)
QUOTE_RUN = re.compile(r"'{2,}")
MARKUP_CHARACTERS = re.compile(r"[{}\[\]<>|=']+")
APOSTROPHE_THEN_ITALICS = re.compile(r"(?<=[^\s'])'''(?!')")
# the lookbehinds follow a first character so that the scan can skip to it
SPACE_BEFORE_PUNCTUATION = re.compile(r" (?<=\S ) *(?=[,;:.](?:\s|$))")
LIST_MARKER = re.compile(r"^([*#:;]+)\s*")
_WIDE_SPACE = r"\t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
# a run of spaces after a word, but for a lone " " (already what a run becomes)
SPACES = re.compile(
    rf"[ {_WIDE_SPACE}](?<=\S[ {_WIDE_SPACE}])[ {_WIDE_SPACE}]+|[{_WIDE_SPACE}](?<=\S[{_WIDE_SPACE}])"
)
WIDE_SPACE = re.compile(f"[{_WIDE_SPACE}]")
ZERO_WIDTH = re.compile(r"[\u200b\u200c\u200d\ufeff\u2060]")
BLANK_LINES = re.compile(r"\n\n\n+")  # not \n{3,}: a literal prefix lets the scan skip ahead
IMAGE_FILE = re.compile(r"\.(?:svg|png|jpe?g|gif|tiff?|webp)$", re.IGNORECASE)
_EMPTY_PAIR = r"\((?:[\s,;:]|or|and)*\)"
EMPTY_PAIR = re.compile(_EMPTY_PAIR)  # the scan skips to "(", where " ?" would stop it at every character
EMPTY_PARENS = re.compile(rf" ?{_EMPTY_PAIR}")
RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}")
INFOBOX_SKIPPED_KEYS = re.compile(
    r"^(?:.*image.*|alt|caption|logo.*|signature.*|map(?:[ _].*)?|pushpin.*|module\d*|embed|child|footnotes|"
    r"coordinates|coords|label_position|relief|mapframe.*|.*_size|.*_upright|.*_alt|.*width.*|(?:.*[ _])?ref)$",
    re.IGNORECASE,
)
PREAMBLE = "Preamble"


@dataclass(slots=True)
class Section:
    """A kept section: ``number`` "0", "1", "2.1"…, its heading, Markdown body and ancestors' lines."""

    number: str
    heading: str
    body: str
    parents: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        return f"Section {self.number}: {self.heading}"


@dataclass(slots=True)
class Document:
    """A page converted to Markdown sections."""

    title: str
    sections: list[Section]
    converter: str = "markdown"  # or "plaintext-fallback:<reason>"

    @property
    def markdown(self) -> str:
        return "\n\n".join(f"{s.line}\n{s.body}".rstrip() for s in self.sections)


@dataclass(slots=True)
class _RawSection:
    level: int
    heading: str
    text: str


class WikitextConverter:
    """Converts a page's wikitext to a :class:`Document`.

    Args:
        infobox: render the infobox as a key/value table at the top of the preamble.
        tables: convert tables (else drop them).
        drop_sections: headings (case-insensitive) whose sections and subsections are dropped.
        max_page_chars: longer wikitext goes straight to the plain-text fallback.
        page_timeout_s: time budget per page before the fallback.
        max_template_depth: nesting depth beyond which template content is dropped.
    """

    def __init__(
        self,
        *,
        infobox: bool = True,
        tables: bool = True,
        drop_sections: list[str] | tuple[str, ...] = (),
        max_page_chars: int = 3_000_000,
        page_timeout_s: float = 10.0,
        max_template_depth: int = 30,
    ) -> None:
        self.infobox = infobox
        self.tables = tables
        self.drop_sections = {s.strip().lower() for s in drop_sections}
        self.max_page_chars = max_page_chars
        self.page_timeout_s = page_timeout_s
        self.max_template_depth = max_template_depth

    def convert(self, title: str, wikitext: str, timestamp: str | None = None) -> Document:
        """The page as Markdown sections; never raises."""
        today = _revision_date(timestamp)
        if len(wikitext) > self.max_page_chars:
            return self._fallback(title, wikitext, f"too large ({len(wikitext)} chars)")
        try:
            deadline = Deadline(self.page_timeout_s)
            raw = _split_sections(markup.strip_comments_and_refs(wikitext))
            return Document(
                title, self._assemble(raw, lambda text, lead: self._body(text, lead, today, deadline))
            )
        except PageTimeout:
            return self._fallback(title, wikitext, f"timeout after {self.page_timeout_s}s")
        except (RecursionError, MemoryError, ValueError, IndexError, KeyError, TypeError) as exc:
            return self._fallback(title, wikitext, f"{type(exc).__name__}: {exc}"[:200])

    # -- sections -----------------------------------------------------------------------------------------

    def _assemble(self, raw: list[_RawSection], body) -> list[Section]:
        kept: list[tuple[int, str, str]] = []  # (level, heading, body)
        drop_below: int | None = None
        for i, section in enumerate(raw):
            if drop_below is not None and section.level > drop_below:
                continue
            drop_below = None
            heading = PREAMBLE if i == 0 else _one_line(self._inline_text(section.heading))
            if i and heading.lower().rstrip(":") in self.drop_sections:
                drop_below = section.level
                continue
            kept.append((section.level, heading, body(section.text, i == 0)))
        return _number(_without_empty(kept))

    # -- body conversion ----------------------------------------------------------------------------------

    def _body(self, text: str, lead: bool, today: date | None, deadline: Deadline) -> str:
        infobox: list[str] = []
        text = self._templates(text, today, deadline, 0, infobox if lead and self.infobox else None)
        text = self._links(text, deadline)
        text = EXTERNAL_LINK.sub(lambda m: m.group(1) or "", text)
        if self.tables:
            text = convert_tables(text, lambda cell: _inline_cleanup(cell, "br-space"))
        else:
            text = convert_tables(text, lambda cell: "")
        lines = [_list_line(line) for line in text.split("\n")]
        body = _inline_cleanup("\n".join(infobox + [""] + lines if infobox else lines), "br-newline")
        return _tidy(body)

    def _templates(
        self, text: str, today: date | None, deadline: Deadline, depth: int, infobox: list[str] | None
    ) -> str:
        if "{{" not in text:
            return text

        def render(span: str) -> str:
            deadline.check()
            params = markup.split_params(span[2:-2])
            name = normalise_name(params[0])
            if depth >= self.max_template_depth:
                return ""
            if name.startswith("formatnum:"):
                number = self._templates(params[0].split(":", 1)[1], today, deadline, depth + 1, None).strip()
                return f"{int(number):,}" if number.isdigit() else number
            if infobox is not None and not infobox and name.startswith("infobox"):
                infobox.extend(self._infobox(params, today, deadline, depth))
                return ""
            if not is_rendered(name):
                return ""
            call = TemplateCall(
                params[0], [self._templates(p, today, deadline, depth + 1, None) for p in params[1:]]
            )
            return render_template(call, today) or ""

        return markup.replace_spans(text, markup.balanced_spans(text), render)

    def _infobox(self, params: list[str], today: date | None, deadline: Deadline, depth: int) -> list[str]:
        rows = []
        for param in params[1:]:
            key, sep, value = param.partition("=")
            key = key.strip()
            if not sep or not key or INFOBOX_SKIPPED_KEYS.match(key):
                continue
            value = self._templates(value, today, deadline, depth + 1, None)
            value = EXTERNAL_LINK.sub(lambda m: m.group(1) or "", self._links(value, deadline))
            value = _inline_cleanup(value, "br-semicolon")
            value = "; ".join(
                p for p in (LIST_MARKER.sub("", line).strip() for line in value.split("\n")) if p
            )
            value = " ".join(value.split())
            if value and not IMAGE_FILE.search(value):
                rows.append(f"| {key.replace('_', ' ')} | {value.replace('|', chr(92) + '|')} |")
        if not rows:
            return []
        name = " ".join(params[0].replace("_", " ").split())
        return [f"| {name} | |", "| --- | --- |", *rows, ""]

    def _links(self, text: str, deadline: Deadline) -> str:
        if "[[" not in text:
            return text

        def render(span: str) -> str:
            deadline.check()
            inner = span[2:-2]
            parts = markup.split_params(inner)
            target = parts[0].strip()
            if ":" in target and (  # both patterns end with it
                DROPPED_NAMESPACES.match(target) or (len(parts) == 1 and INTERLANGUAGE.match(target))
            ):
                return ""
            if len(parts) == 1:
                label = target.lstrip(":")
                return label.lstrip("#") if label.startswith("#") else label
            label = parts[-1]
            if not label.strip():  # pipe trick: [[Foo (bar)|]] -> Foo
                label = re.sub(r"\s*\(.*?\)\s*$", "", target.lstrip(":").split(":", 1)[-1])
            return self._links(label, deadline)

        return markup.replace_spans(text, markup.balanced_spans(text, markup.BRACKETS), render)

    def _inline_text(self, text: str) -> str:
        deadline = Deadline(self.page_timeout_s)
        text = self._templates(text, None, deadline, 0, None)
        return _inline_cleanup(
            EXTERNAL_LINK.sub(lambda m: m.group(1) or "", self._links(text, deadline)), "br-space"
        )

    # -- fallback -----------------------------------------------------------------------------------------

    def _fallback(self, title: str, wikitext: str, reason: str) -> Document:
        try:
            raw = _split_sections(markup.strip_comments_and_refs(wikitext))
            sections = self._assemble(raw, lambda text, lead: _plain_text(text))
        except Exception:  # noqa: BLE001 - the fallback of the fallback: the words, without markup characters
            words = MARKUP_CHARACTERS.sub(" ", wikitext[: self.max_page_chars]).split()
            sections = [Section("0", PREAMBLE, unicodedata.normalize("NFC", " ".join(words)))]
        return Document(title, sections, f"plaintext-fallback:{reason}")


# -- helpers ----------------------------------------------------------------------------------------------


def _revision_date(timestamp: str | None) -> date | None:
    try:
        return date.fromisoformat(timestamp[:10]) if timestamp else None
    except ValueError:
        return None


def _split_sections(text: str) -> list[_RawSection]:
    sections = [_RawSection(1, PREAMBLE, "")]
    last = 0
    for match in HEADING.finditer(text):
        sections[-1].text = text[last : match.start()]
        sections.append(_RawSection(max(2, len(match.group(1))), match.group(2), ""))
        last = match.end()
    sections[-1].text = text[last:]
    return sections


def _without_empty(sections: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """Drop sections with no text of their own and no non-empty subsection."""
    keep = [False] * len(sections)
    for i, (level, _, body) in enumerate(sections):
        if body:
            keep[i] = True
            for j in range(i - 1, 0, -1):  # mark the ancestors (the preamble is nobody's parent)
                if sections[j][0] < level:
                    keep[j] = True
                    level = sections[j][0]
    return [s for s, k in zip(sections, keep) if k]


def _number(sections: list[tuple[int, str, str]]) -> list[Section]:
    out: list[Section] = []
    stack: list[tuple[int, Section]] = []  # (level, section) of open ancestors
    counters: list[int] = []
    for level, heading, body in sections:
        if heading == PREAMBLE and not out:
            out.append(Section("0", PREAMBLE, body))
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        depth = len(stack) + 1
        counters = counters[:depth] + [0] * (depth - len(counters))
        counters[depth - 1] += 1
        section = Section(".".join(map(str, counters)), heading, body, [s.line for _, s in stack])
        stack.append((level, section))
        out.append(section)
    return out


def _list_line(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("----"):
        return ""
    match = LIST_MARKER.match(stripped)
    if not match or stripped.startswith(("|", "{|")):
        return stripped
    markers, rest = match.group(1), stripped[match.end() :]
    if markers[-1] == "*":
        return "  " * (len(markers) - 1) + "- " + rest if rest else ""
    if markers[-1] == "#":
        return "  " * (len(markers) - 1) + "1. " + rest if rest else ""
    if markers[-1] == ";":
        term, _, definition = rest.partition(" : ")
        return f"{term}: {definition}" if definition else rest
    return rest


def _inline_cleanup(text: str, br: str) -> str:
    if "<" in text:  # every tag pattern starts with it
        text = markup.NOWIKI.sub(lambda m: m.group(1) or "", text)
        text = markup.BR.sub({"br-space": " ", "br-newline": "\n", "br-semicolon": "\n"}[br], text)
        text = markup.ANY_TAG.sub("", text)
    if "__" in text:
        text = markup.MAGIC_WORD.sub("", text)
    text = _strip_quotes(text)
    text = html.unescape(text)
    return _collapse_spaces(text)


def _collapse_spaces(text: str) -> str:
    """Zero-width characters out, space runs after a word to one space. Each pattern runs only on text where
    it can match: zero-width and wide spaces but the tab are not ASCII, and a run is two spaces or a wide one."""
    ascii_only = text.isascii()
    if not ascii_only:
        text = ZERO_WIDTH.sub("", text)
    if "  " in text or "\t" in text or (not ascii_only and WIDE_SPACE.search(text)):
        text = SPACES.sub(" ", text)
    return text


def _one_line(text: str) -> str:
    return " ".join(RESIDUE.sub("", text).split())


def _strip_quotes(text: str) -> str:
    """Remove bold/italic quote runs as MediaWiki reads them. With an odd number of both two- and three-quote
    runs on a line, one three-quote run after a word is an apostrophe plus italics: ''A Proposal'''s -> A Proposal's."""
    if "''" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if "''" not in line:
            lines.append(line)
            continue
        runs = [len(r) for r in QUOTE_RUN.findall(line)]
        if sum(n in (2, 5) for n in runs) % 2 and sum(n in (3, 5) for n in runs) % 2:
            line = APOSTROPHE_THEN_ITALICS.sub("'", line, count=1)
        lines.append(QUOTE_RUN.sub(_quote_run if "" in line else "", line))  # no run of 4: all go
    return "\n".join(lines)


def _quote_run(match: re.Match) -> str:
    """Runs of 2, 3 and 5 quotes (and junk runs over 5) are markup; 4 is an apostrophe then bold."""
    return "'" if len(match.group()) == 4 else ""


def _tidy(text: str) -> str:
    text = RESIDUE.sub("", text)
    if EMPTY_PAIR.search(text):
        text = EMPTY_PARENS.sub("", text)
    text = SPACE_BEFORE_PUNCTUATION.sub("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    text = BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
    return unicodedata.normalize("NFC", text)


def _plain_text(text: str) -> str:
    """Bounded, markup-blind cleanup: innermost templates out (a fixed number of linear passes), links to
    labels, table and tag syntax removed."""
    for _ in range(40):
        text, n = re.subn(r"\{\{[^{}]*\}\}", "", text)
        if not n:
            break
    for _ in range(5):
        text, n = re.subn(r"\[\[(?:[^\[\]|]*\|)*([^\[\]|]*)\]\]", r"\1", text)
        if not n:
            break
    text = EXTERNAL_LINK.sub(lambda m: m.group(1) or "", text)
    lines = [ln for ln in text.split("\n") if not ln.lstrip().startswith(("{|", "|", "!"))]
    return _tidy(_inline_cleanup("\n".join(_list_line(ln) for ln in lines), "br-newline"))
