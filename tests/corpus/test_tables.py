"""``sws.corpus.tables``: nested tables flatten into their cell, closed or not, in work linear in the lines
(counted, not timed: each line is looked at a bounded number of times, however deep the unclosed nesting)."""

import pytest

from sws.corpus import tables


def test_a_nested_table_flattens_into_its_cell():
    lines = ["{|", "| a", "|-", "| {{x}}", "{|", "| b || c", "|}", "| d", "|}"]
    assert tables.table_to_markdown(lines, str.upper) == ["| A |  |", "| --- | --- |", "| {{X}} B C | D |"]


def _looks(monkeypatch, lines: list[str]) -> int:
    seen = [0]
    table_line = tables._table_line

    def counted(line: str) -> str:
        seen[0] += 1
        return table_line(line)

    monkeypatch.setattr(tables, "_table_line", counted)
    tables.table_to_markdown(lines, str)
    return seen[0]


@pytest.mark.parametrize("closed", [False, True], ids=["unclosed", "closed"])
def test_nested_tables_cost_linear_work(monkeypatch, closed):
    def nested(n: int) -> list[str]:
        return ("{|\n| a\n|-\n| b\n" * n + "|}\n" * (n if closed else 0)).split("\n")

    small, large = _looks(monkeypatch, nested(200)), _looks(monkeypatch, nested(400))
    assert large <= 2 * small + 10, (small, large)  # quadratic work would be ~4x
