"""``sws eval`` and ``sws report`` through the real CLI: in-process tools over a real index, the heuristic
baseline over real HTTP, episodes on Ray actors, resume, and the tables."""

import json
from pathlib import Path

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


def test_a_resume_with_other_inputs_is_refused(leads_root, tmp_path):
    """The issue: another --data file reusing the ids, another eval.seed under random_300, a larger --limit
    were each mixed into the run (and the report said n=10, Submit (%) 400.00). Each is refused with what
    differs; a larger --limit is allowed with --extend, recorded, and every count is of the recorded rows."""
    from sws.eval.report import run_stats
    from sws.eval.results import part_files, recorded_status
    from sws.eval.run_meta import read_run_meta
    from sws.ui.runs import RunStore

    run = tmp_path / "run"
    other = tmp_path / "other.jsonl"  # the same ids with other questions
    lines = Path(BAMBOOGLE).read_text(encoding="utf-8").splitlines()
    other.write_text(
        "".join(json.dumps({**json.loads(line), "question": f"Q{i}?"}) + "\n" for i, line in enumerate(lines))
    )
    runner = CliRunner()

    def evaluate(data=BAMBOOGLE, limit=3, seed=42, *extra):
        args = ["eval", "--dataset", "Bamboogle", "--data", str(data), "--subset", "random_300"]
        args += ["--limit", str(limit), "--index", str(leads_root / "index"), "--out", str(run)]
        return runner.invoke(cli, [*args, "eval.workers=1", f"eval.seed={seed}", *extra])

    assert evaluate().exit_code == 0
    for result, differs in [
        (evaluate(other), "data_sha256 "),
        (evaluate(seed=7), "sampling_seed 42 → 7"),
        (evaluate(limit=6), "holds a run of 3 items, not these 6; add --extend to add the new items to it"),
    ]:
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        message = result.output.strip().splitlines()[-1]
        assert message.startswith(f"Error: {run} holds ") and differs in message, message
    assert len(recorded_status(run)) == 3

    extended = evaluate(BAMBOOGLE, 6, 42, "--extend")
    assert extended.exit_code == 0, extended.output
    summary = json.loads(extended.output[extended.output.index("{") :])
    assert (summary["total"], summary["ran"], summary["recorded"], summary["missing"]) == (6, 3, 6, [])
    meta = read_run_meta(run)
    assert (meta.items, [(e.from_items, e.items) for e in meta.extended]) == (6, [(3, 6)])
    assert meta.query_embedding == {
        "model": "all-MiniLM-L6-v2",
        "runtime": "torch",
    }  # the index's, in process
    ids = [i for p in part_files(run) for i in pq.read_table(p, columns=["id"])["id"].to_pylist()]
    assert len(ids) == len(set(ids)) == 6
    stats = run_stats(run)
    (ui_run,) = RunStore([run]).runs
    assert (stats.n, stats.recorded, stats.missing) == (6, 6, 0) and stats.submit_rate <= 1.0
    assert RunStore([run]).summary(ui_run).stats == stats
    report = runner.invoke(cli, ["report", str(run), "--out", str(tmp_path / "report"), "--no-plots"])
    assert report.exit_code == 0 and "| heuristic-baseline-no-llm | 6 |" in report.output, report.output


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


def test_the_profiles_agent_settings_and_judge_endpoint_reach_the_requests(leads_root, tmp_path):
    """``eval.agent`` becomes the run's AgentConfig (recorded, sent every round); ``eval.judge_base_url: null``
    judges on the agent's endpoint, as ``-c smollm2`` does with its served model, caching under the driver's
    ``SWS_CACHE`` (this test's own), not wherever the Ray workers' environment points."""
    from sws.agent.scripted_server import ScriptedLLMServer
    from sws.eval.judge import JUDGE_SYSTEM_PROMPT
    from sws.eval.results import load_table

    with ScriptedLLMServer(policy="search_then_submit") as server:
        args = ["eval", "--dataset", "Bamboogle", "--data", BAMBOOGLE, "--limit", "2"]
        args += ["--index", str(leads_root / "index"), "--out", str(tmp_path / "run")]
        args += ["--llm-base-url", server.url, "--model", "search_then_submit", "eval.workers=1"]
        args += ["eval.agent.tool_choice=required", "eval.agent.max_completion_tokens=256", "eval.judge=true"]
        args += ["eval.judge_model=search_then_submit", "eval.judge_base_url=null"]
        result = CliRunner().invoke(cli, args)
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    agent = [r for r in requests if r["messages"][0]["content"] != JUDGE_SYSTEM_PROMPT]
    judged = [r for r in requests if r["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT]
    assert len(agent) == 4 and {(r["tool_choice"], r["max_completion_tokens"]) for r in agent} == {
        ("required", 256)
    }
    assert len(judged) == 2 and {r["model"] for r in judged} == {"search_then_submit"}
    rows = load_table(tmp_path / "run").to_pylist()
    assert [json.loads(r["agent_config"])["tool_choice"] for r in rows] == ["required", "required"]
