"""The main job on the embedded default, end to end through the real CLI: corpus -> indexes -> the tools ->
``sws serve`` -> an evaluation through the service with the heuristic baseline -> the tables."""

import json


def test_quickstart_runs_the_whole_chain(quickstart_run):
    tmp_path, result = quickstart_run
    assert result.exit_code == 0, result.output[-3000:]
    out = result.output
    for step in ("[1/5] corpus", "[2/5] indexes", "[3/5] the tools", "[4/5] serving", "[5/5] evaluation"):
        assert step in out
    assert '"articles": 106' in out and "# Actrius (chunk 1/1)" in out
    assert "| heuristic-baseline-no-llm | 3 |" in out
    assert "| n/a (no judge) |" in out and '"gpt_judge": null' in out  # no judge ran: no 0.00 score
    run = json.loads((tmp_path / "runs" / "bamboogle" / "run.json").read_text())
    index = json.loads((tmp_path / "index" / "manifest.json").read_text())
    assert run["fingerprint"] == index["fingerprint"] and run["model"] == "heuristic-baseline-no-llm"
