"""``sws eval`` and ``sws report`` through the real CLI: in-process tools over a real index, the heuristic
baseline over real HTTP, episodes on Ray actors, resume, and the tables."""

import json

import pytest
from click.testing import CliRunner

from sws.cli import cli

pytestmark = pytest.mark.usefixtures("ray_local")
BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"


def test_eval_then_resume_then_report(leads_root, tmp_path):
    runner = CliRunner()
    args = [
        "eval",
        "--dataset",
        "Bamboogle",
        "--data",
        BAMBOOGLE,
        "--limit",
        "6",
        "--index",
        str(leads_root / "index"),
        "--out",
        str(tmp_path / "run"),
        "eval.workers=1",
    ]
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.output[first.output.index("{") :])
    assert (summary["total"], summary["recorded"], summary["errored"], summary["ran"]) == (6, 6, 0, 6)
    assert summary["model"] == "heuristic-baseline-no-llm"
    again = runner.invoke(cli, args)
    assert again.exit_code == 0 and json.loads(again.output[again.output.index("{") :])["ran"] == 0

    report = runner.invoke(
        cli, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "report"), "--no-plots"]
    )
    assert report.exit_code == 0, report.output
    assert "| heuristic-baseline-no-llm | 6 |" in report.output
    assert (tmp_path / "report" / "report.tex").is_file() and (tmp_path / "report" / "stats.csv").is_file()


def test_eval_refuses_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["eval", "--dataset", "nope", "--data", BAMBOOGLE, "--index", str(tmp_path)])
    assert result.exit_code != 0 and "unknown dataset" in result.output
    result = runner.invoke(cli, ["report", str(tmp_path)])
    assert result.exit_code != 0 and "no results" in result.output


def test_eval_over_a_damaged_index_records_errors_not_submissions(damaged_index, tmp_path):
    """The issue's case: a zeroed .store (sizes kept) was shown to the model as "Fix tool arguments" and every
    episode came out submitted. Now each episode is an error (retried on resume), and --verify refuses."""
    from sws.eval.results import recorded_status

    args = [
        "eval",
        "--dataset",
        "Bamboogle",
        "--data",
        BAMBOOGLE,
        "--limit",
        "2",
        "--index",
        str(damaged_index),
    ]
    args += ["--out", str(tmp_path / "run"), "eval.workers=1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert (summary["recorded"], summary["errored"]) == (2, 2)
    assert set(recorded_status(tmp_path / "run").values()) == {"error"}

    refused = CliRunner().invoke(cli, [*args, "--verify"])
    assert refused.exit_code == 1 and ".store is damaged" in refused.output
