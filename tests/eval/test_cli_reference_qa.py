"""``sws eval --qa-root`` end to end (the scripted LLM over real HTTP, in-process tools over the leads index,
episodes on Ray): the paper's questions asked in the file's order with the reference's seeds, the file and its
sha256 in ``run.json``; sws's own ``random_300`` labelled as its resample in ``run.json``, the CLI's output,
``sws report`` and the UI, and never resumed into the paper's."""

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sws.agent.scripted_server import ScriptedLLMServer
from sws.cli import cli
from sws.eval import load_records
from sws.ui.runs import RunStore
from tests.eval.test_reference_qa import ARCHIVE, EXPECTED

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_local")]
PAPER_FILE = ARCHIVE / "random_300" / "Bamboogle.json"
FULL_FILE = ARCHIVE / "full_test" / "Bamboogle" / "bamboogle.jsonl"
RESAMPLE = "random_300 (sws resample, seed 42)"


def evaluate(leads_root, url, questions, *extra):
    args = ["eval", "--dataset", "bamboogle", *questions, "--subset", "random_300", "--llm-base-url", url]
    args += ["--model", "scripted", "--index", str(leads_root / "index"), "eval.workers=1", *extra]
    result = CliRunner().invoke(cli, args)
    return result, (json.loads(result.output[result.output.index("{") :]) if result.exit_code == 0 else None)


def test_the_papers_questions_are_asked_in_order_and_told_apart_from_sws_resample(leads_root, tmp_path):
    paper_run = tmp_path / "paper"
    with ScriptedLLMServer(script=[{"tool_calls": [["submit_answer", {"answer": "1956"}]]}]) as llm:
        paper, summary = evaluate(leads_root, llm.url, ["--qa-root", str(ARCHIVE)], "--out", str(paper_run))
        asked = [(r["messages"][1]["content"], r["seed"]) for r in llm.requests]
        into_paper, _ = evaluate(leads_root, llm.url, ["--data", str(FULL_FILE)], "--out", str(paper_run))
        resample, resampled = evaluate(
            leads_root, llm.url, ["--data", str(FULL_FILE)], "--limit", "1", f"eval.out={tmp_path / 'runs'}"
        )
    assert paper.exit_code == 0, paper.output
    expected = EXPECTED["datasets"]["Bamboogle"][1]["items"]
    assert [item["id"] for item in expected] == ["test_2", "test_0", "test_1"]  # not the full_test order
    records = sorted(load_records(paper_run), key=lambda r: r.index)
    assert [(r.id, r.seed) for r in records] == [(item["id"], item["seed"]) for item in expected]
    assert sorted(asked) == sorted((item["asked"], item["seed"]) for item in expected)
    meta = json.loads((paper_run / "run.json").read_text())
    assert {k: meta[k] for k in ("data_path", "data_sha256", "data_source", "subset", "subset_label")} == {
        "data_path": str(PAPER_FILE),
        "data_sha256": hashlib.sha256(PAPER_FILE.read_bytes()).hexdigest(),
        "data_source": "reference",
        "subset": "random_300",
        "subset_label": "random_300",
    }
    assert meta["sampling_seed"] is None and meta["items"] == 3
    assert (summary["subset"], summary["data_path"], summary["recorded"]) == (
        "random_300",
        str(PAPER_FILE),
        3,
    )

    assert into_paper.exit_code == 1, into_paper.output
    assert into_paper.output.splitlines()[-1].startswith(
        f"Error: {paper_run} holds a run of random_300, not {RESAMPLE} (data_sha256 "
    )
    assert resample.exit_code == 0, resample.output
    assert resampled["subset"] == RESAMPLE
    assert resampled["out"] == str(tmp_path / "runs" / "Bamboogle-random_300-sws-resample-seed-42-scripted")
    assert json.loads((Path(resampled["out"]) / "run.json").read_text())["subset_label"] == RESAMPLE

    report = CliRunner().invoke(
        cli, ["report", str(tmp_path), "--out", str(tmp_path / "report"), "--no-plots"]
    )
    assert report.exit_code == 0, report.output
    assert "random_300: F1 and LLM-judge accuracy (%)" in report.output
    assert f"{RESAMPLE}: F1 and LLM-judge accuracy (%)" in report.output
    labels = sorted(run.label for run in RunStore([tmp_path]).runs)
    assert labels == [f"Bamboogle / scripted ({RESAMPLE})", "Bamboogle / scripted (random_300)"]
