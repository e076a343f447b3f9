"""``benchmarks/served_eval.py``: the ready line of ``sws serve --llm`` and the ``sws eval`` command against it."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.conftest import bench_module

served_eval = bench_module("served_eval")
READY = {
    "event": "ready",
    "url": "http://127.0.0.1:9/",
    "llm_url": "http://127.0.0.1:9/llm/v1",
    "llm_model": "m",
}


def test_the_last_ready_line_is_the_event():
    earlier = {**READY, "llm_model": "old"}
    stdout = f"starting\n{json.dumps(earlier)}\nnoise {{\n{json.dumps(READY)}\n"
    assert served_eval.ready_event(stdout) == READY


@pytest.mark.parametrize(
    ("stdout", "message"),
    [
        ("starting\n", "no ready line"),
        (json.dumps({"event": "ready", "url": "http://127.0.0.1:9"}) + "\n", "names no LLM"),
    ],
)
def test_a_ready_line_without_the_llm_is_an_error(stdout, message):
    with pytest.raises(ValueError, match=message):
        served_eval.ready_event(stdout)


def test_eval_command_uses_the_served_llm_and_tools(tmp_path):
    command = served_eval.eval_command("py", READY, tmp_path / "run", 3, "-c", "smollm2", "eval.workers=1")
    assert command[:4] == ["py", "-m", "sws", "eval"]
    flags = dict(zip(command[4:-3:2], command[5:-3:2], strict=True))
    assert flags == {
        "--dataset": "bamboogle",
        "--data": str(served_eval.DATASET),
        "--limit": "3",
        "--llm-base-url": READY["llm_url"],
        "--model": "m",
        "--tools-url": READY["url"],
        "--out": str(tmp_path / "run"),
    }
    assert command[-3:] == ["-c", "smollm2", "eval.workers=1"] and served_eval.DATASET.is_file()
