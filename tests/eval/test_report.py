"""Tables 3-6 from results directories: denominators are the dataset size, failures are shown."""

import json
import re

import pytest
from click.testing import CliRunner

from sws.agent import AgentConfig, Episode
from sws.cli import cli
from sws.env import tool_schemas
from sws.eval import QAItem
from sws.eval.records import EpisodeRecord
from sws.eval.report import collect, report_tables, score_table, tool_use_table, write_report
from sws.eval.results import PartWriter, prepare_run


def make_run(root, dataset, model, outcomes, items, subset="full_test", **questions):
    """outcomes: (status, f1, judge, rounds, searches, opens, tokens, seconds) per recorded item; ``questions``:
    more of ``run.json`` (``data_source``, ``sampling_seed``)."""
    out = root / f"{dataset}-{model}-{subset}-{'-'.join(map(str, questions.values()))}"
    config = AgentConfig(model=model)
    run = {
        "dataset": dataset,
        "subset": subset,
        "model": model,
        "agent_config": config.to_dict(),
        "fingerprint": "f",
        **questions,
    }
    prepare_run(out, {**run, "items": items})
    writer = PartWriter(out, "r-w0")
    for i, (status, f1, judge, rounds, searches, opens, tokens, seconds) in enumerate(outcomes):
        ep = Episode(messages=[], status=status, rounds=rounds, time_cost=seconds)
        ep.tool_calls.update({"search": searches, "open_url": opens})
        ep.usage["total_tokens"] = tokens
        scores = (
            None if status == "error" else {"f1": f1, **({"gpt_judge": judge} if judge is not None else {})}
        )
        item = QAItem(f"{i}", "Q", "A", (), "default", dataset)
        writer.add(EpisodeRecord.from_episode(item, i, ep, config, tool_schemas(), "f", scores))
    writer.flush()
    return out


def test_tables(tmp_path):
    ok = ("submitted", 1.0, 1, 3, 2, 1, 1000, 2.0)
    make_run(
        tmp_path, "2WikiMultiHopQA", "Qwen3.5-9B", [ok, ok, ("max_rounds", 0.0, 0, 20, 15, 5, 9000, 10.0)], 4
    )
    make_run(tmp_path, "Bamboogle", "Qwen3.5-9B", [ok, ("error", 0, None, 1, 0, 0, 10, 0.5)], 2)
    make_run(tmp_path, "Bamboogle", "Qwen3.5-4B", [ok, ("submitted", 0.5, None, 2, 1, 0, 500, 1.0)], 2)
    make_run(tmp_path, "HotpotQA", "gpt-5.4", [ok], 1, subset="random_300", data_source="reference")
    half = ("submitted", 0.5, 0, 3, 2, 1, 1000, 2.0)
    make_run(tmp_path, "HotpotQA", "gpt-5.4", [half], 1, subset="random_300", sampling_seed=42)
    stats = collect([tmp_path])
    assert len(stats) == 5

    scores = score_table(stats, "full_test")
    assert scores.columns == [
        "Model",
        "2Wiki n",
        "2Wiki F1",
        "2Wiki Judge",
        "Bamboogle n",
        "Bamboogle F1",
        "Bamboogle Judge",
    ]
    assert scores.rows == [
        ["Qwen3.5-4B", "-", "-", "-", "2", "75.00", "50.00"],  # a missing verdict counts 0
        ["Qwen3.5-9B", "4", "50.00", "50.00", "2", "50.00", "50.00"],  # dataset size is the denominator
    ]
    assert scores.notes == [
        "2Wiki / Qwen3.5-9B: 0 errored, 1 missing of 4 (counted as 0)",
        "Bamboogle / Qwen3.5-9B: 1 errored, 0 missing of 2 (counted as 0)",
    ]
    tools = tool_use_table(stats, "Qwen3.5-9B")
    assert tools.rows[0] == ["2Wiki", "4", "8.67", "6.33", "2.33", "50.00", "3,667", "4.67"]
    # the paper's random_300 file and sws's resample are separate tables, the resample's labelled so
    assert score_table(stats, "random_300").rows == [["gpt-5.4-2026-03-05", "1", "100.00", "100.00"]]
    resample = "random_300 (sws resample, seed 42)"
    assert score_table(stats, resample).rows == [["gpt-5.4-2026-03-05", "1", "50.00", "0.00"]]
    assert [t.title for t in report_tables(stats)] == [
        "full_test: F1 and LLM-judge accuracy (%)",
        "random_300: F1 and LLM-judge accuracy (%)",
        f"{resample}: F1 and LLM-judge accuracy (%)",
        "full_test: tool-use statistics for Qwen3.5-4B",
        "full_test: tool-use statistics for Qwen3.5-9B",
        "random_300: tool-use statistics for gpt-5.4-2026-03-05",
        f"{resample}: tool-use statistics for gpt-5.4-2026-03-05",
    ]

    md, tex, csv_path = write_report(stats, tmp_path / "report", plots=False)
    text = md.read_text()
    assert "| Qwen3.5-9B | 4 | 50.00 | 50.00 | 2 | 50.00 | 50.00 |" in text
    assert "- Bamboogle / Qwen3.5-9B: 1 errored" in text
    assert r"\begin{tabular}{lrrrrrrr}" in tex.read_text() and r"Submit (\%)" in tex.read_text()
    header, *lines = csv_path.read_text().splitlines()
    assert header.startswith("dataset,subset,model,n,recorded,errored,missing,context_exhausted,f1,judge")
    assert len(lines) == 5 and sum(line.startswith(f'HotpotQA,"{resample}",') for line in lines) == 1


def test_episodes_that_outgrew_the_context_are_counted(tmp_path):
    out = make_run(
        tmp_path,
        "Bamboogle",
        "SmolLM2-135M-Instruct",
        [("submitted", 1.0, 1, 3, 2, 0, 900, 2.0), ("context_exhausted", 0.0, 0, 6, 6, 0, 9000, 9.0)],
        3,
    )
    (stats,) = collect([out])
    assert (stats.context_exhausted, stats.errored, stats.missing) == (1, 0, 1)
    assert (stats.f1, stats.submit_rate) == (1 / 3, 1 / 3)  # no answer: 0 of the dataset's 3
    note = "Bamboogle / SmolLM2-135M-Instruct: 1 of 3 outgrew the model's context (no answer: 0)"
    for table in (score_table([stats], "full_test"), tool_use_table([stats], "SmolLM2-135M-Instruct")):
        assert note in table.notes and f"- {note}" in table.markdown()


def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    ok = ("submitted", 1.0, 1, 3, 2, 1, 1000, 2.0)
    make_run(tmp_path, "HotpotQA", "Qwen3.5-9B", [ok], 1)
    make_run(tmp_path, "PopQA", "Qwen3.5-4B", [ok, ok], 2)
    make_run(tmp_path, "PopQA", "Qwen3.5-4B", [ok], 1, subset="random_300", sampling_seed=7)
    *_, plot, resample = write_report(collect([tmp_path]), tmp_path / "report")
    assert plot.name == "tool_use_full_test.png" and plot.read_bytes()[:4] == b"\x89PNG"
    assert resample.name == "tool_use_random_300-sws-resample-seed-7.png" and resample.is_file()


def test_without_a_judge_the_judge_column_says_so(tmp_path):
    """No verdict recorded (no judge ran): "n/a (no judge)", not a 0.00 that reads as a measured score;
    with a judge, a run whose verdicts are all 0 still shows 0.00."""
    make_run(tmp_path, "Bamboogle", "Qwen3.5-9B", [("submitted", 1.0, None, 3, 2, 1, 1000, 2.0)], 1)
    make_run(tmp_path, "Bamboogle", "Qwen3.5-4B", [("submitted", 0.0, 0, 3, 2, 1, 1000, 2.0)], 1)
    stats = collect([tmp_path])
    assert [s.judge for s in stats] == [0.0, None]
    assert score_table(stats, "full_test").rows == [
        ["Qwen3.5-4B", "1", "0.00", "0.00"],
        ["Qwen3.5-9B", "1", "100.00", "n/a (no judge)"],
    ]
    md, *_ = write_report(stats, tmp_path / "report", plots=False)
    assert "| Qwen3.5-9B | 1 | 100.00 | n/a (no judge) |" in md.read_text()


def test_the_progress_line_says_when_no_judge_ran(tmp_path):
    from sws.eval.runner import _Running

    running = _Running(tmp_path)
    assert running.add({"f1": 1.0, "gpt_judge": None}) == "avg F1=100.00 | avg llm_judge=n/a (no judge)"
    judged = _Running(tmp_path)
    assert judged.add({"f1": 1.0, "gpt_judge": 0}) == "avg F1=100.00 | avg llm_judge=0.00"
    assert judged.add({"f1": 0.0, "gpt_judge": None}) == "avg F1=50.00 | avg llm_judge=0.00"


def test_no_rate_exceeds_100_percent(tmp_path):
    """A run mixed before runs had an identity: its run.json selects 2 items, 5 episodes are recorded (the
    issue: n=10, Submit (%) 400.00). Every count is of the recorded rows: n is 5, every rate at most 100 %."""
    ok = ("submitted", 1.0, 1, 3, 2, 1, 1000, 2.0)
    make_run(tmp_path, "Bamboogle", "Qwen3.5-9B", [ok] * 5, 2)
    (stats,) = collect([tmp_path])
    assert (stats.n, stats.recorded, stats.missing) == (5, 5, 0)
    assert all(0.0 <= rate <= 1.0 for rate in (stats.f1, stats.judge, stats.submit_rate))
    result = CliRunner().invoke(
        cli, ["report", str(tmp_path), "--out", str(tmp_path / "report"), "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    assert "| Bamboogle | 5 | 3.00 | 2.00 | 1.00 | 100.00 |" in result.output
    percentages = [float(cell) for cell in re.findall(r"\| (\d+\.\d\d)(?= \|)", result.output)]
    assert percentages and max(percentages) <= 100.0


def test_a_mistyped_run_json_is_one_line_error(tmp_path):
    """The issue's ``"model": ["x"]``: a one-line Error naming the file and the field, not a traceback."""
    out = make_run(tmp_path, "Bamboogle", "Qwen3.5-9B", [("submitted", 1.0, 1, 3, 2, 1, 1000, 2.0)], 1)
    run = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**run, "model": ["x"]}))
    result = CliRunner().invoke(
        cli, ["report", str(tmp_path), "--out", str(tmp_path / "report"), "--no-plots"]
    )
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    message = f"Error: {out / 'run.json'} is damaged: model: Input should be a valid string; fix it, or move"
    assert result.output.splitlines() == [f"{message} that run out of the directories reported"]


@pytest.mark.parametrize("kind", ["f1 as strings", "a corpus Parquet"])
def test_a_part_of_another_schema_is_one_line_error(tmp_path, kind):
    """The issue: a part whose ``f1`` holds strings gave a 56-line traceback; a corpus Parquet in ``parts/``
    was counted as an episode. Each is a damaged part: one line, never an episode; ``--repair`` moves it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sws.corpus.schema import DOCS
    from sws.eval.results import part_files

    ok = ("submitted", 1.0, 1, 3, 2, 1, 1000, 2.0)
    out = make_run(tmp_path, "Bamboogle", "Qwen3.5-9B", [ok, ok], 2)
    if kind == "f1 as strings":
        table = pq.read_table(part_files(out)[0])
        bad = table.set_column(table.schema.get_field_index("f1"), "f1", pa.array(["1.0", "0.5"]))
    else:
        bad = pa.Table.from_pylist([{"page_id": 1, "title": "T", "markdown": "M"}], schema=DOCS)
    part = out / "parts" / "part-20260102T000000-bbbbbb-w000-00000.parquet"
    pq.write_table(bad, part)
    args = ["report", str(tmp_path), "--out", str(tmp_path / "report"), "--no-plots"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    (line,) = result.output.splitlines()
    reason = (
        "column f1 is string, not double" if kind == "f1 as strings" else "not a results part (no column id)"
    )
    assert line.startswith(f"Error: damaged part file {part}: {reason}; rerun with --repair"), line
    repaired = CliRunner().invoke(cli, [*args, "--repair"])
    assert repaired.exit_code == 0 and "| Bamboogle | 2 |" in repaired.output, repaired.output
    assert (out / "damaged" / part.name).is_file()
