"""Section-aware token chunking.

A document is cut into units that are never split: a section's heading line, a sentence, a table row (long
non-table text without sentence ends is cut at whitespace). A page of T tokens gets the number of chunks k whose mean T/k
is nearest the target inside the band ``target ± tolerance``, and units are packed greedily toward the mean of
what is left: a chunk closes when the next unit would leave the band, when it is in the band and the next unit
moves it away from that mean, or at a section boundary when the whole next section would not fit. A short tail borrows units from the chunk before it. Every chunk starts with the
section line(s) it is in (and a table's header row when it starts inside a table), so it reads on its own.
Token counts are those of the real tokenizer on the final chunk text, computed from the units' counts (each
unit is tokenised once) wherever the joins between them are clean (:func:`clean_join`) and the tokenizer is
Qwen3's, by recounting otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sws.corpus.sentences import split_sentences
from sws.corpus.tokens import TokenCounter
from sws.corpus.wikitext import Document, Section

TABLE_SEPARATOR = re.compile(r"^\|(?: --- \|)+$")


@dataclass(slots=True)
class _Unit:
    text: str
    tokens: int
    section: int  # index into the document's sections
    heading: bool = False  # the unit is its section's heading line
    table_head: str | None = None  # header + separator lines of the table this row belongs to


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A chunk of one document: its text (starting with section lines), token count and first section."""

    text: str
    n_tokens: int
    section: str


class SectionChunker:
    """Cuts :class:`Document` s into :class:`TextChunk` s.

    Args:
        counter: the token counter (the embedding model's vocabulary).
        target_tokens: the size chunks are packed toward.
        tolerance: the band is ``target * (1 - tolerance) .. target * (1 + tolerance)``.
    """

    def __init__(self, counter: TokenCounter, target_tokens: int = 1536, tolerance: float = 0.2) -> None:
        if target_tokens < 16 or not 0 <= tolerance < 1:
            raise ValueError(
                f"need target_tokens >= 16 and 0 <= tolerance < 1, got {target_tokens}, {tolerance}"
            )
        self.counter = counter
        self.target = target_tokens
        self.min_tokens = round(target_tokens * (1 - tolerance))
        self.max_tokens = round(target_tokens * (1 + tolerance))

    def chunk(self, doc: Document) -> list[TextChunk]:
        sections = doc.sections
        if not sections:
            return []
        self._header_tokens: dict[str, int] = {}  # this document's chunk headers, counted once each
        units = self._units(sections)
        groups = self._pack(sections, units)
        groups = self._rebalance_tail(sections, groups)
        return self._finalise(sections, groups)

    # -- units --------------------------------------------------------------------------------------------

    def _units(self, sections: list[Section]) -> list[_Unit]:
        texts: list[tuple[str, int, bool, str | None]] = []
        for i, section in enumerate(sections):
            texts.append((section.line + "\n", i, True, None))
            lines = section.body.split("\n") if section.body else []
            table_head: str | None = None
            for j, line in enumerate(lines):
                is_row = line.startswith("|")
                if is_row and j + 1 < len(lines) and TABLE_SEPARATOR.match(lines[j + 1]):
                    table_head = f"{line}\n{lines[j + 1]}\n"
                elif not is_row:
                    table_head = None
                end = "\n\n" if j == len(lines) - 1 or not lines[j + 1] else "\n"
                if not line:
                    continue
                if is_row:
                    texts.append((line + end, i, False, table_head))
                    continue
                pieces = split_sentences(line)
                pieces[-1] += end
                texts.extend((piece, i, False, None) for piece in pieces)
        counts = self.counter.count_many([t[0] for t in texts])
        units: list[_Unit] = []
        for (text, section, heading, table_head), tokens in zip(texts, counts):
            if tokens > self.max_tokens and table_head is None and not heading:
                units.extend(self._hard_split(text, tokens, section))
            else:
                units.append(_Unit(text, tokens, section, heading, table_head))
        return units

    def _hard_split(self, text: str, tokens: int, section: int) -> list[_Unit]:
        """A unit over the band without sentence ends: cut at whitespace into target-sized pieces."""
        size = max(1, len(text) * self.target // tokens)
        pieces, start = [], 0
        while start < len(text):
            end = len(text) if len(text) - start <= size else text.rfind(" ", start + 1, start + size)
            end = start + size if end <= start else end
            pieces.append(text[start:end])
            start = end
        counts = self.counter.count_many(pieces)
        return [_Unit(p, n, section) for p, n in zip(pieces, counts)]

    # -- packing ------------------------------------------------------------------------------------------

    def _header(self, sections: list[Section], first: _Unit) -> str:
        section = sections[first.section]
        lines = list(section.parents)
        if not first.heading:
            lines.append(section.line)
        header = "".join(line + "\n" for line in lines)
        if first.table_head and not first.text.startswith(first.table_head.split("\n", 1)[0]):
            header += first.table_head
        return header

    def _count_header(self, header: str) -> int:
        if header not in self._header_tokens:
            self._header_tokens[header] = self.counter.count(header) if header else 0
        return self._header_tokens[header]

    def _estimate(self, sections: list[Section], group: list[_Unit]) -> int:
        return self._count_header(self._header(sections, group[0])) + sum(u.tokens for u in group)

    def _chunk_count(self, total: int) -> int:
        """How many chunks a page of ``total`` tokens needs so that their mean lies nearest the target."""
        k = max(1, round(total / self.target))
        if total / k > self.max_tokens:
            k += 1
        elif k > 1 and total / k < self.min_tokens:
            k -= 1
        return k

    def _pack(self, sections: list[Section], units: list[_Unit]) -> list[list[_Unit]]:
        section_tokens: dict[int, int] = {}
        for unit in units:
            section_tokens[unit.section] = section_tokens.get(unit.section, 0) + unit.tokens
        remaining = sum(section_tokens.values())
        chunks_left = self._chunk_count(remaining)
        target = remaining / chunks_left
        groups: list[list[_Unit]] = []
        current: list[_Unit] = []
        total = 0
        for unit in units:
            if current:
                after = total + unit.tokens
                close = after > self.max_tokens
                if not close and total >= self.min_tokens:
                    if unit.heading:
                        close = total + section_tokens[unit.section] > self.max_tokens
                    else:
                        close = abs(after - target) > abs(total - target)
                if not close:
                    current.append(unit)
                    total = after
                    continue
                groups.append(current)
                remaining -= sum(u.tokens for u in current)
                chunks_left = max(1, chunks_left - 1)
                target = min(self.max_tokens, max(self.min_tokens, remaining / chunks_left))
            current = [unit]
            total = self._estimate(sections, current)
        if current:
            groups.append(current)
        return groups

    def _rebalance_tail(self, sections: list[Section], groups: list[list[_Unit]]) -> list[list[_Unit]]:
        """Fill a short last chunk: merge it into the one before if that fits, else shift units back to front
        along the chunks (each giving its last units to the next) when that leaves fewer chunks off the band."""
        if len(groups) < 2 or self._estimate(sections, groups[-1]) >= self.min_tokens:
            return groups
        if self._estimate(sections, groups[-2] + groups[-1]) <= self.max_tokens:
            return groups[:-2] + [groups[-2] + groups[-1]]
        shifted = [list(g) for g in groups]
        for i in range(len(shifted) - 1, 0, -1):
            prev, last = shifted[i - 1], shifted[i]
            while len(prev) > 1 and self._estimate(sections, last) < self.min_tokens:
                if self._estimate(sections, [prev[-1]] + last) > self.max_tokens:
                    break
                last.insert(0, prev.pop())
            if self._estimate(sections, prev) >= self.min_tokens:
                break
        return shifted if self._off_band(sections, shifted) < self._off_band(sections, groups) else groups

    def _off_band(self, sections: list[Section], groups: list[list[_Unit]]) -> int:
        return sum(not self.min_tokens <= self._estimate(sections, g) <= self.max_tokens for g in groups)

    # -- text ---------------------------------------------------------------------------------------------

    def _render(self, sections: list[Section], group: list[_Unit]) -> tuple[str, int]:
        """The chunk's text and its exact token count."""
        header = self._header(sections, group[0])
        pieces: list[tuple[str, int | None]] = [(header, self._count_header(header))] if header else []
        pieces += [(u.text, u.tokens) for u in group]
        text = "".join(p for p, _ in pieces).strip()
        first, last = pieces[0][0].lstrip(), pieces[-1][0].rstrip()
        if len(pieces) < 2 or not first or not last or not self.counter.sums_at_clean_joins:
            return text, self.counter.count(text)  # (or the strip may reach beyond the end pieces)
        if first != pieces[0][0]:
            pieces[0] = (first, None)
        if last != pieces[-1][0]:
            pieces[-1] = (last, None)
        return text, self._sum_counts(pieces)

    def _sum_counts(self, pieces: list[tuple[str, int | None]]) -> int:
        """The token count of the pieces' concatenation: known counts (None: unknown) summed across clean
        joins, runs of pieces joined otherwise counted as one text."""
        total = 0
        run, tokens = [pieces[0][0]], pieces[0][1]
        for text, known in pieces[1:]:
            if clean_join(run[-1], text):
                total += tokens if tokens is not None else self.counter.count("".join(run))
                run, tokens = [text], known
            else:
                run.append(text)
                tokens = None
        return total + (tokens if tokens is not None else self.counter.count("".join(run)))

    def _finalise(self, sections: list[Section], groups: list[list[_Unit]]) -> list[TextChunk]:
        chunks: list[TextChunk] = []
        i = 0
        while i < len(groups):
            group = groups[i]
            text, n_tokens = self._render(sections, group)
            if n_tokens > self.max_tokens and len(group) > 1:  # the estimate was a few tokens short
                if i + 1 == len(groups):
                    groups.append([])
                groups[i + 1].insert(0, group.pop())
                continue
            chunks.append(TextChunk(text, n_tokens, sections[group[0].section].line))
            i += 1
        return chunks


def clean_join(left: str, right: str) -> bool:
    r"""True when ``count(left + right) == count(left) + count(right)`` is certain for Qwen3's tokenizer.

    That holds when no pre-token of ``left + right`` spans the join: BPE merges stay inside pre-tokens, and
    matching the Qwen2 pattern at a position reads only forward. Two joins qualify. (a) ``left`` ends with
    "\n" and ``right`` starts with non-whitespace after any spaces (the units of a body, joined at line
    ends): a pre-token holding a newline is made of whitespace or ends in newlines, and ``\s*[\r\n]+`` is
    tried before the other whitespace alternatives, so the run ends at the last newline, ``left``'s.
    (b) ``left`` ends with non-whitespace and ``right`` starts with a space (the sentences of one line): no
    alternative matches non-whitespace followed by a space, and the lookahead of ``\s+(?!\S)`` only
    follows whitespace. Added tokens hold neither newlines nor spaces, and NFC neither composes across a
    newline or a space nor reorders across them. ``str.isspace`` is a superset of the pattern's ``\s``
    (it also takes U+001C..U+001F), which errs on the safe side.
    """
    if not left or not right:
        return False
    if left[-1] == "\n":
        rest = right.lstrip(" ")
        return bool(rest) and not rest[0].isspace()
    return right[0] == " " and not left[-1].isspace()
