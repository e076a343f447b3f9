"""The Ray runner end to end against the scripted server: faults, resume, refusal, a worker killed midway."""

import threading
import time

import pyarrow.parquet as pq
import pytest

from sws.agent import STOP_CONTEXT_EXHAUSTED, AgentConfig, LLMSettings
from sws.agent.scripted_server import Faults, ScriptedLLMServer
from sws.eval import EvalSpec, QAItem
from sws.eval.results import part_files, recorded_status
from sws.eval.run_meta import RunMismatchError
from sws.eval.runner import run_evaluation

pytestmark = pytest.mark.ray

ITEMS = [
    QAItem(f"q{i:03d}", f"Who wrote play {i}?", "William Shakespeare", (), "default", "Bamboogle")
    for i in range(80)
]


def tools_factory():
    class Tools:  # defined here so Ray pickles it by value
        def call_tool(self, name, arguments_json):
            return "1. [William Shakespeare](https://en.wikipedia.org/wiki/1#chunk-1)\n   - playwright"

    return Tools()


def long_tools_factory():
    class Tools:  # 1,200 characters a call (~300 tokens as the scripted server counts)
        def call_tool(self, name, arguments_json):
            return "1. [William Shakespeare](https://en.wikipedia.org/wiki/1#chunk-1)\n   - " + "p" * 1130

    return Tools()


def evaluate(
    url, out, items=ITEMS, fingerprint="env-1", model="search_then_submit", tools=tools_factory, **kwargs
):
    llm = LLMSettings(url, max_concurrency=32, timeout=0.5, max_attempts=3, backoff_s=0.02)
    spec = EvalSpec(
        items,
        out,
        AgentConfig(model=model),
        llm,
        tools,
        fingerprint,
        dataset="Bamboogle",
        workers=2,
        episodes_per_worker=16,
        rows_per_part=8,
        progress=False,
        **kwargs,
    )
    return run_evaluation(spec)


def raw_ids(out):
    return [i for p in part_files(out) for i in pq.read_table(p, columns=["id"])["id"].to_pylist()]


def test_faults_resume_and_refusal(ray_local, tmp_path):
    faults = Faults(error_rate=0.2, timeout_rate=0.05, hang_s=1.5, seed=5)
    with ScriptedLLMServer(faults=faults, record_requests=False) as server:
        first = evaluate(server.url, tmp_path)
    assert (first.total, first.recorded, first.missing, first.ran) == (80, 80, [], 80)
    status = recorded_status(tmp_path)
    assert set(status.values()) <= {"submitted", "error"} and len(status) == 80
    assert first.errored == sum(s == "error" for s in status.values()) > 0  # 3 attempts do not always suffice
    assert sorted(raw_ids(tmp_path)) == [i.id for i in ITEMS]  # each exactly once

    with ScriptedLLMServer(record_requests=False) as server:
        second = evaluate(server.url, tmp_path)  # resume: only the errored ones run again
        assert server.llm.stats["requests"] == 2 * first.errored
    assert (second.ran, second.recorded, second.errored) == (first.errored, 80, 0)
    assert second.f1 == 1.0
    assert len(raw_ids(tmp_path)) == 80 + first.errored  # retried ids superseded, not rewritten

    with pytest.raises(RunMismatchError, match="fingerprint"):
        evaluate(server.url, tmp_path, fingerprint="env-2")


def test_a_context_overflow_is_recorded_scored_and_never_rerun(ray_local, tmp_path):
    """vLLM's 400 for a prompt over ``max_model_len`` (played by the scripted server) is the episode's outcome
    ``context_exhausted``: recorded with no answer (F1 0), then skipped by a resume as a finished episode."""
    items, faults = ITEMS[:4], Faults(max_model_len=1000)
    with ScriptedLLMServer(faults=faults, record_requests=False) as server:
        first = evaluate(server.url, tmp_path, items, model="never_submit", tools=long_tools_factory)
        assert server.llm.stats["context_overflows"] == 4  # one refused request per episode
        second = evaluate(server.url, tmp_path, items, model="never_submit", tools=long_tools_factory)
        assert server.llm.stats["requests"] == 4 * 3  # the resume sent nothing
    assert (first.recorded, first.errored, first.ran, second.ran, second.recorded) == (4, 0, 4, 0, 4)
    rows = pq.read_table(part_files(tmp_path)).to_pylist()
    assert {(r["status"], r["stop_reason"], r["f1"], r["rounds"]) for r in rows} == {
        ("context_exhausted", STOP_CONTEXT_EXHAUSTED, 0.0, 2)
    }
    assert all("maximum context length is 1000 tokens" in r["error"] for r in rows)


def test_killed_worker_loses_nothing(ray_local, tmp_path):
    import ray

    items = [QAItem(f"k{i:03d}", f"Question {i}?", "x", (), "default", "Bamboogle") for i in range(120)]

    def kill_one_worker():
        while not part_files(tmp_path):
            time.sleep(0.05)
        (name,) = [
            n for n in ray.util.list_named_actors() if n.startswith("sws-eval-") and n.endswith("-w0-g1")
        ]
        ray.kill(ray.get_actor(name), no_restart=False)

    with ScriptedLLMServer(faults=Faults(latency_s=0.02), record_requests=False) as server:
        killer = threading.Thread(target=kill_one_worker, daemon=True)
        killer.start()
        summary = evaluate(server.url, tmp_path, items=items)
        killer.join(timeout=5)
    assert (summary.recorded, summary.missing) == (120, [])
    assert sorted(raw_ids(tmp_path)) == [i.id for i in items]
