"""MediaWiki tables (``{| … |}``) to Markdown pipe tables.

Each table becomes a caption line (if any), a header row, a ``| --- |`` separator and one line per row, so a
row is always one line and chunking never splits it. Spans are ignored, short rows are padded, nested tables
are flattened into the text of their cell, and an unclosed table ends at the end of its section.
"""

from __future__ import annotations

import re
from collections.abc import Callable

CELL_ATTRIBUTES = re.compile(r'^\s*(?:[A-Za-z-]+\s*=\s*(?:"[^"]*"|\'[^\']*\'|[^\s|]+)\s*)+$')
# attributes left alone in a cell whose content was a dropped template: `|| bgcolor="pink" ||`
QUOTED_ATTRIBUTES_ONLY = re.compile(r'^\s*(?:[A-Za-z-]+\s*=\s*"[^"]*"\s*)+$')


def _table_line(line: str) -> str:
    return line.lstrip(" :")


def _split_cells(body: str, header: bool) -> list[str]:
    cells = re.split(r"\|\||!!", body) if header else body.split("||")
    out = []
    for cell in cells:
        attrs, sep, content = cell.partition("|")
        if sep and (not attrs.strip() or CELL_ATTRIBUTES.match(attrs)):
            out.append(content)
        else:
            out.append("" if QUOTED_ATTRIBUTES_ONLY.match(cell) else cell)
    return out


class _TableBuilder:
    def __init__(self) -> None:
        self.caption = ""
        self.rows: list[list[str]] = []
        self.header_rows: set[int] = set()
        self.current: list[str] | None = None

    def new_row(self) -> None:
        self.current = None

    def add_cells(self, cells: list[str], header: bool) -> None:
        if self.current is None:
            self.current = []
            self.rows.append(self.current)
            if header:
                self.header_rows.add(len(self.rows) - 1)
        elif not header:
            self.header_rows.discard(len(self.rows) - 1)
        self.current.extend(cells)

    def append_text(self, text: str) -> None:
        if self.current:
            self.current[-1] += " " + text
        elif not self.rows and self.caption:
            self.caption += " " + text


def _closings(lines: list[str]) -> dict[int, int]:
    """For each ``{|`` line, the index after the ``|}`` that closes it (``len(lines)``: never closed), in one
    pass: a scan per nested table would be quadratic in unclosed ones."""
    ends, open_at = {}, []
    for k, line in enumerate(lines):
        line = _table_line(line)
        if line.startswith("{|"):
            open_at.append(k)
        elif line.startswith("|}") and open_at:
            ends[open_at.pop()] = k + 1
    return ends | dict.fromkeys(open_at, len(lines))


def _parse(lines: list[str], inline: Callable[[str], str], start: int = 0, ends: dict | None = None):
    """The table whose ``{|`` is ``lines[start]``, up to its closing (nested tables flattened into cells)."""
    ends = _closings(lines) if ends is None else ends
    table = _TableBuilder()
    i, end = start + 1, ends[start]
    while i < end:
        line = _table_line(lines[i]).rstrip()
        if line.startswith("{|"):  # nested table: flatten into the current cell
            j = ends[i]
            nested = _parse(lines, inline, i, ends)
            table.append_text("; ".join(" ".join(c for c in row if c) for row in nested.rows))
            i = j
            continue
        if line.startswith("|}"):
            break
        if line.startswith("|+"):
            table.caption = line[2:].partition("|")[2] or line[2:]
        elif line.startswith("|-"):
            table.new_row()
        elif line.startswith("!"):
            table.add_cells(_split_cells(line[1:], header=True), header=True)
        elif line.startswith("|"):
            table.add_cells(_split_cells(line[1:], header=False), header=False)
        elif line.strip():
            table.append_text(line.strip())
        i += 1
    table.caption = inline(table.caption)
    table.rows = [[_cell_text(c, inline) for c in row] for row in table.rows]
    return table


def _cell_text(cell: str, inline: Callable[[str], str]) -> str:
    text = " ".join(inline(cell).split())
    return text.replace("|", "\\|")


def table_to_markdown(lines: list[str], inline: Callable[[str], str]) -> list[str]:
    """Markdown lines for one table block (its ``{|`` line first); ``inline`` cleans the text of each cell."""
    table = _parse(lines, inline)
    rows = [row for row in table.rows if any(row)]
    if not rows:
        return [table.caption] if table.caption else []
    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    out = [table.caption] if table.caption else []
    out.append("| " + " | ".join(padded[0]) + " |")
    out.append("|" + " --- |" * width)
    out.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return out


def convert_tables(text: str, inline: Callable[[str], str]) -> str:
    """Replace every top-level ``{| … |}`` block in ``text`` by its Markdown table."""
    if "{|" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _table_line(lines[i]).startswith("{|"):
            out.append(lines[i])
            i += 1
            continue
        depth, j = 0, i
        while j < len(lines):
            stripped = _table_line(lines[j])
            depth += stripped.startswith("{|") - stripped.startswith("|}")
            j += 1
            if depth == 0:
                break
        out.append("")
        out.extend(table_to_markdown(lines[i:j], inline))
        out.append("")
        i = j
    return "\n".join(out)
