"""``sws eval`` refusing inputs it cannot run, through the real CLI: one line and its exit code, before any Ray,
index or episode (so these tests start none)."""

import json

import pytest
from click.testing import CliRunner

from sws.cli import cli

BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"


def evaluate(data, *extra):
    """``sws eval`` on ``data`` over an index that does not exist: whatever is refused is refused first."""
    args = ["eval", "--dataset", "Bamboogle", "--data", str(data), "--index", "no-such-index", *extra]
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("limit", ["0", "-1", "-3"])
def test_a_limit_below_one_is_a_usage_error(limit):
    """The issue: ``--limit -1`` ran 3 of 4 items and ``--limit -3`` one (exit 0); ``--limit 0`` an empty run."""
    result = evaluate(BAMBOOGLE, "--limit", limit)
    assert result.exit_code == 2, result.output
    assert (
        result.output.splitlines()[-1]
        == f"Error: Invalid value for '--limit': {limit} is not in the range x>=1."
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Question,Answer\n", ": no items"),
        (
            '{"question": "Q1?"}\n{"question": "Q2?", "answers": []}\n',
            ": none of its 2 items has a gold answer",
        ),
    ],
)
def test_a_file_without_items_to_run_is_a_usage_error(tmp_path, content, message):
    """The issue: a header-only CSV and a file with no gold answers each gave exit 0 and an empty run."""
    data = tmp_path / ("bamboogle.csv" if content.startswith("Question") else "bamboogle.jsonl")
    data.write_text(content)
    result = evaluate(data)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: {data}{message}"


def test_a_lone_surrogate_is_one_line_before_any_episode(tmp_path):
    """The issue: ``\\ud83d`` in an id crashed before any episode, in a question after all of them."""
    data = tmp_path / "bamboogle.jsonl"
    rows = [
        {"id": "a", "question": "Q1?", "answer": "x"},
        {"id": "b\ud83d", "question": "Q2?", "answer": "y"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json.dumps writes "\\ud83d"
    result = evaluate(data)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"Error: {data}:2: id holds a lone surrogate '\\ud83d' at character 2 "), line


def test_a_damaged_csv_is_one_line(tmp_path):
    """The issue: an unbalanced quote in a FRAMES CSV gave a 40-line ``_csv.Error`` traceback."""
    data = tmp_path / "frames.csv"
    data.write_text('Prompt,Answer\nQ1?,x\n"Q2?,y\n' + "Q,z\n" * 40_000)
    result = CliRunner().invoke(cli, ["eval", "--dataset", "frames", "--data", str(data), "--index", "none"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output.splitlines() == [
        f"Error: {data}:3: malformed CSV: field larger than field limit (131072)"
    ]
