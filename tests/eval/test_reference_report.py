"""``sws report`` on output trees the reference's own runner wrote (tests/data/reference_runs): the table its
script printed for them, character for character, and every bad file named."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.eval.reference_runs import read_reference

FIXTURE = Path(__file__).parents[1] / "data" / "reference_runs"
EDGES = FIXTURE / "edge_cases" / "output_full_test"


def report(tmp_path, *args):
    result = CliRunner().invoke(cli, ["report", *args, "--out", str(tmp_path), "--no-plots"])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize(
    ("flag", "printed"), [((), "reference_table.txt"), (("--disable-n",), "reference_table_disable_n.txt")]
)
def test_the_reference_scripts_table(tmp_path, flag, printed):
    expected = (FIXTURE / printed).read_text(encoding="utf-8")
    result = report(tmp_path, str(FIXTURE / "tree"), *flag)
    assert (tmp_path / "reference_table.md").read_text(encoding="utf-8") == expected
    assert result.stdout.endswith(expected)
    named = [line for line in result.stderr.splitlines() if line.startswith("reference tree:")]
    assert named and all("no gpt_judge in eval (read; judge 0)" in line for line in named)  # judge-less only


def test_sws_tables_of_the_reference_runs(tmp_path):
    result = report(tmp_path, str(FIXTURE / "tree" / "output_full_test"))
    assert "| heuristic | 3 | 66.67 | 66.67 |" in result.stdout  # HotpotQA: the same F1 as the script's
    heuristic = result.stdout.split("full_test: tool-use statistics for heuristic")[1].split("###")[0]
    # counted from the messages: search, open the top hit, submit
    assert "| HotpotQA | 3 | 3.00 | 1.00 | 1.00 | 100.00 |" in heuristic


def test_edge_cases_counted_and_named(tmp_path):
    (run,) = read_reference(EDGES).runs
    problems = {(p.kind, p.path.name, p.skipped) for p in run.problems if p.kind != "no_judge"}
    assert problems == {
        ("leftover_tmp", "leftover.json.tmp", True),
        ("eval_null", "eval_null.json", False),
        ("not_utf8", "latin1.json", True),
        ("bad_json", "truncated.json", True),
        ("duplicate_id", "duplicate.json", True),
    }
    assert "no_judge.json" in {p.path.name for p in run.problems if p.kind == "no_judge"}
    assert (run.files, len(run.records)) == (8, 5)  # 3 of the runner's + eval_null + no_judge

    result = report(tmp_path, str(EDGES))
    folder = EDGES / "HotpotQA" / "search_then_submit"
    for line in (
        f"reference tree: {folder}: 1 file(s) leftover .json.tmp (an interrupted write; not read): leftover.json.tmp",
        f"reference tree: {folder}: 1 file(s) not UTF-8 (not read; 0 in the reference table): latin1.json",
        f"reference tree: {folder}: 1 file(s) not JSON, e.g. truncated (not read; 0 in the reference table): truncated.json",
        f"reference tree: {folder}: 1 file(s) eval is null (read; F1 and judge 0): eval_null.json",
    ):
        assert line in result.stderr.splitlines()
    assert (
        "id already read from another file (not read again; still in the reference table): duplicate.json"
        in result.stderr
    )
    assert "| search_then_submit | 8 | " in result.stdout  # the script's n: the .json files present
