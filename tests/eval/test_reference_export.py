"""``sws export --format reference``: an sws run as the reference's per-question files, read back by sws and by
the reference's own table script and runner cache."""

import asyncio
import json

from click.testing import CliRunner

from sws.agent import AgentConfig
from sws.cli import cli
from sws.env import tool_schemas
from sws.eval import EpisodeRecord, QAItem, score_prediction
from sws.eval.reference_runs import read_reference
from sws.eval.results import PartWriter, load_records, prepare_run
from tests.eval.reference_code import cached_ids, reference_code, reference_table  # noqa: F401 (fixture)
from tests.eval.test_records import episode

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


def test_reference_reads_the_export(tmp_path, reference_code):  # noqa: F811
    run = make_run(tmp_path)
    full, sample = tmp_path / "output_full_test", tmp_path / "output_sample_random_300"
    assert export(run, full).exit_code == 0
    export(run, sample)
    report = CliRunner().invoke(cli, ["report", str(run), "--out", str(tmp_path / "report"), "--no-plots"])
    sws_f1 = report.output.split("| Qwen/Qwen3.5-9B | 3 | ")[1].split(" |")[0]

    table = reference_table(reference_code, full, sample)
    row = next(line for line in table.splitlines() if line.startswith("| Qwen3.5-9B"))
    assert row.split("|")[-4:-1] == [" 3 ", f" {sws_f1:>6} ", "   0.00 "]  # Bamboogle's n, f1, gpt

    data = tmp_path / "bamboogle.json"
    data.write_text(json.dumps([{"id": qid, "question": "Q?", "answer": "A"} for qid, _ in QUESTIONS]))
    cache = cached_ids(reference_code, data, "Bamboogle", full / "Bamboogle" / "Qwen3.5-9B")
    scores = {r.id: r.eval["f1"] for r in load_records(run)}
    assert cache["pending"] == []
    assert {c["qid"]: (c["status"], c["f1"]) for c in cache["cached"]} == {
        qid: ("cached", f1) for qid, f1 in scores.items()
    }
