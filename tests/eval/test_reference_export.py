"""``sws export --format reference``: an sws run as the reference's per-question files, read back by sws; and
by the reference's own table script and runner cache, as recorded by tests/data/reference_runs/make.py (an sws
run, its export, and what the reference made of that export: README.md there)."""

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from sws.agent import AgentConfig
from sws.cli import cli
from sws.env import tool_schemas
from sws.eval import EpisodeRecord, QAItem, score_prediction
from sws.eval.reference_runs import REFERENCE_DATASETS, read_reference
from sws.eval.report import find_runs
from sws.eval.results import PartWriter, load_records, prepare_run
from sws.eval.run_meta import read_run_meta
from tests.eval.test_records import episode

FIXTURE = Path(__file__).parents[1] / "data" / "reference_runs"
SWS_RUN = FIXTURE / "sws_run"

SEARCH = {
    "content": "facts: none",
    "tool_calls": [["search", {"query": "Hamlet"}], ["open_url", {"url": "u"}]],
}
QUESTIONS = [
    ("h1", [SEARCH, {"tool_calls": [["submit_answer", {"answer": "Shakespeare"}]]}]),
    ("h2", [{"content": "hm"}, {"tool_calls": [["submit_answer", {"answer": "William Blake"}]]}]),
    ("h3", [SEARCH]),  # never submits: max rounds
]


def make_run(root, fail=()):
    """A Bamboogle run of Qwen3.5-9B: real episodes against the scripted LLM, scored; ids in ``fail`` errored."""
    out = root / "run"
    config = AgentConfig(model="Qwen/Qwen3.5-9B", max_round=3)
    prepare_run(
        out,
        {"dataset": "Bamboogle", "model": config.model, "agent_config": config.to_dict(), "fingerprint": "f"},
        [qid for qid, _ in QUESTIONS],
    )
    writer = PartWriter(out, "r-w0")
    for index, (qid, script) in enumerate(QUESTIONS):
        item = QAItem(
            qid, "Who wrote Hamlet?", "William Shakespeare", ("Shakespeare",), "default", "Bamboogle"
        )
        ep, _ = episode(script)
        scores = asyncio.run(score_prediction(item, ep.predicted_answer))
        if qid in fail:
            ep.status, ep.error_type, ep.error, ep.stop_reason, scores = (
                "error",
                "LLMError",
                "down",
                None,
                None,
            )
        writer.add(EpisodeRecord.from_episode(item, index, ep, config, tool_schemas(), "f", scores))
    writer.flush()
    return out


def export(run, out):
    return CliRunner().invoke(cli, ["export", "--format", "reference", str(run), str(out)])


def test_export_round_trip(tmp_path):
    run = make_run(tmp_path, fail={"h3"})
    result = export(run, tmp_path / "output_full_test")
    folder = tmp_path / "output_full_test" / "Bamboogle" / "Qwen3.5-9B"
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"wrote 2 question file(s) to {folder}",
        (
            f"not written: {run} id 'h3': the episode failed (the reference writes no file for a failed "
            "episode; its runner runs it again)"
        ),
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["h1.json", "h2.json"]  # no temp file left
    original = {r.id: r for r in load_records(run)}
    assert json.loads((folder / "h1.json").read_text(encoding="utf-8")) == original["h1"].to_json()

    (read,) = read_reference(tmp_path / "output_full_test").runs
    assert [(p.kind, p.path.name) for p in read.problems] == [
        ("no_judge", "h1.json"),
        ("no_judge", "h2.json"),
    ]
    for record in read.records:
        before = original[record.id]
        assert record.to_json() == before.to_json()
        counted = ("rounds", "search_calls", "open_calls", "submit_calls", "tool_errors", "nudges", "status")
        assert [getattr(record, k) for k in counted] == [getattr(before, k) for k in counted]


def test_export_refuses_what_is_not_a_run(tmp_path):
    result = export(tmp_path, tmp_path / "out")
    assert result.exit_code == 1 and f"no results (run.json) under {tmp_path}" in result.output


def read_fields(root):
    """What the reference's table script (each ``*.json``'s ``eval.f1``, ``eval.gpt_judge``) and its runner's
    resume check (``<id>.json``, its ``id`` and ``eval``) read, per file; and every file present."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    read = {}
    for name in files:
        obj = json.loads((root / name).read_text(encoding="utf-8"))
        scores = obj["eval"] if isinstance(obj.get("eval"), dict) else {}
        read[name] = (obj["id"], scores.get("f1"), scores.get("gpt_judge"))
    return read


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_export_of_the_recorded_run_is_the_one_the_reference_read(tmp_path):
    result = export(SWS_RUN, tmp_path / "output_full_test")
    assert result.exit_code == 0, result.output
    assert read_fields(tmp_path / "output_full_test") == read_fields(
        FIXTURE / "sws_export" / "output_full_test"
    )


def test_the_reference_table_of_the_export_is_sws_reports(tmp_path):
    report = CliRunner().invoke(cli, ["report", str(SWS_RUN), "--out", str(tmp_path), "--no-plots"])
    assert report.exit_code == 0, report.output
    lines = report.stdout.splitlines()
    header = cells(next(line for line in lines if line.startswith("| Model |")))
    sws = dict(zip(header, cells(next(line for line in lines if line.startswith("| search_then_submit |")))))

    printed = (FIXTURE / "sws_export_table.txt").read_text(encoding="utf-8").split("\n\n")[0]  # full_test
    row = cells(next(line for line in printed.splitlines() if line.startswith("| search_then_submit ")))[1:]
    reference = {d: row[3 * i : 3 * i + 3] for i, d in enumerate(REFERENCE_DATASETS) if row[3 * i] != "-"}
    datasets = {read_run_meta(run).dataset for run in find_runs([SWS_RUN])}
    assert set(reference) == datasets and len(datasets) == 2
    for dataset, (n, f1, judge) in reference.items():
        assert (n, f1) == (sws[f"{dataset} n"], sws[f"{dataset} F1"])
        assert (sws[f"{dataset} Judge"], judge) == ("n/a (no judge)", "0.00")  # the script counts none as 0


def test_the_reference_runner_counts_the_export_as_done():
    cache = json.loads((FIXTURE / "sws_export_cache.json").read_text(encoding="utf-8"))
    runs = {read_run_meta(run).dataset: run for run in find_runs([SWS_RUN])}
    assert set(cache) == set(runs)
    for dataset, run in runs.items():
        assert cache[dataset]["pending"] == []
        expected = {r.id: ("cached", r.eval["f1"], r.eval.get("gpt_judge")) for r in load_records(run)}
        assert {
            c["qid"]: (c["status"], c["f1"], c["gpt_judge"]) for c in cache[dataset]["cached"]
        } == expected
