"""``sws eval`` and ``sws report`` through the real CLI: in-process tools over a real index, the heuristic
baseline over real HTTP, episodes on Ray actors, resume, and the tables."""

import json

import pyarrow.parquet as pq
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


def test_truncated_part_is_refused_then_repaired(leads_root, tmp_path):
    from sws.eval.report import run_stats
    from sws.eval.results import part_files
    from sws.ui.runs import RunStore

    runner = CliRunner()
    run = tmp_path / "run"
    args = ["eval", "--dataset", "Bamboogle", "--data", BAMBOOGLE, "--limit", "6"]
    args += ["--index", str(leads_root / "index"), "--out", str(run), "eval.workers=2"]
    assert runner.invoke(cli, args).exit_code == 0
    part = part_files(run)[-1]
    lost = pq.read_metadata(part).num_rows
    assert 0 < lost < 6  # two workers, two parts
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])  # truncated, as by a full disk

    report = ["report", str(run), "--out", str(tmp_path / "report"), "--no-plots"]
    for command in (args, report):
        refused = runner.invoke(cli, command)
        message = refused.output.strip().splitlines()[-1]
        assert refused.exit_code == 1 and isinstance(refused.exception, SystemExit), command  # no traceback
        assert message.startswith(f"Error: damaged part file {part}: ") and "rerun with --repair" in message

    repaired = runner.invoke(cli, [*args, "--repair"])
    assert repaired.exit_code == 0, repaired.output
    summary = json.loads(repaired.output[repaired.output.index("{") :])
    assert (
        summary["moved_aside"] == [str(run / "damaged" / part.name)]
        and (run / "damaged" / part.name).is_file()
    )
    assert (summary["ran"], summary["recorded"], summary["missing"]) == (lost, 6, [])
    ids = [i for p in part_files(run) for i in pq.read_table(p, columns=["id"])["id"].to_pylist()]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 6  # every item exactly once
    # eval, report and UI agree on the counts
    assert runner.invoke(cli, report).exit_code == 0
    stats = run_stats(run)
    (ui_run,) = RunStore([run]).runs
    assert (stats.n, stats.recorded, stats.missing) == (6, 6, 0)
    assert RunStore([run]).summary(ui_run).stats == stats


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
