"""``sws quickstart --llm smollm2`` through the real CLI: the bundled sample's indexes served over HTTP, SmolLM2
(converted once per session, verified here) on vLLM's CPU engine through Ray Serve LLM, two Bamboogle episodes
on it with every round a tool call, judged by the same served model with the paper's prompt, and the tables
with the plain statement that a 135M model's F1 is near 0. Bounded: 2 questions of at most 4 rounds."""

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.eval.metrics import exact_match
from sws.eval.results import load_table

pytestmark = [pytest.mark.llm, pytest.mark.ray, pytest.mark.timeout(1800)]
MODEL = "SmolLM2-135M-Instruct"
OUTCOMES = {"submitted", "max_rounds", "context_exhausted"}  # defined outcomes: none is an error


def test_quickstart_evaluates_and_judges_with_the_served_smollm2(
    ray_local, smollm2_cache, quickstart_run, tmp_path, monkeypatch
):
    """Resumed from the plain quickstart's corpus and indexes (the same sample and settings: every shard and
    part is reused; the corpus and index steps themselves are the plain test's)."""
    for part in ("corpus", "index"):
        shutil.copytree(quickstart_run[0] / part, tmp_path / part)
    monkeypatch.setenv("SWS_CACHE", str(smollm2_cache))
    args = [
        "quickstart",
        "--llm",
        "smollm2",
        "--out",
        str(tmp_path),
        "--questions",
        "2",
        "eval.agent.max_round=4",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output[-3000:]
    out = result.output
    for step in (
        "[1/6] corpus",
        "[3/6] the tools",
        "[4/6] the model: smollm2",
        "[5/6] serving the tools and the model",
    ):
        assert step in out
    assert f"present: {smollm2_cache / 'models' / 'smollm2'}" in out  # the session's conversion, verified
    assert f"{MODEL} on vLLM (cpu) ready at http://127.0.0.1:" in out and "[6/6] evaluation" in out
    assert out.count("its F1 will be near 0") == 2 and f"| {MODEL} | 2 |" in out

    run_dir = tmp_path / "runs" / "bamboogle-smollm2"
    run = json.loads((run_dir / "run.json").read_text())
    index = json.loads((tmp_path / "index" / "manifest.json").read_text())
    assert (run["model"], run["fingerprint"]) == (MODEL, index["fingerprint"])
    rows = load_table(run_dir).to_pylist()
    assert len(rows) == 2 and {r["status"] for r in rows} <= OUTCOMES, [
        (r["status"], r["error"]) for r in rows
    ]
    for row in rows:
        agent = json.loads(row["agent_config"])
        assert (agent["tool_choice"], agent["max_round"]) == ("required", 4)
        assert 1 <= row["rounds"] <= 4 and row["prompt_tokens"] > 900  # SmolLM2's tokens of the real prompt
        for message in json.loads(row["messages"]):
            if (
                message["role"] == "tool"
                and message["name"] == "search"
                and message["content"].startswith("1.")
            ):
                hits = re.findall(r"^\d+\. \[", message["content"], flags=re.MULTILINE)
                assert 1 <= len(hits) <= 3  # the profile's observation budget
    judged = {(r["question"], r["predicted_answer"]) for r in rows if r["predicted_answer"].strip()}
    judged = {
        (q, p) for q, p in judged if not exact_match(p, [r["answer"] for r in rows if r["question"] == q])
    }
    cached = list((smollm2_cache / "llm_judge").glob(f"{MODEL}-paper-*.txt"))
    assert len(cached) == len(judged)  # the served model answered every judge prompt (its answers cached)
