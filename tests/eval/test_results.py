"""The results directory without Ray: run.json checks, atomic part files, last-record-wins, the worker."""

import asyncio
import json

import pytest

from sws.agent import AgentConfig, Episode
from sws.agent.scripted_server import ScriptedLLMServer
from sws.env import tool_schemas
from sws.eval import QAItem
from sws.eval.records import EpisodeRecord
from sws.eval.results import (
    DamagedPartError,
    PartWriter,
    RunMismatchError,
    load_records,
    load_table,
    move_damaged_parts,
    part_files,
    prepare_run,
    recorded_status,
)
from sws.eval.runner import EpisodeWorker

CONFIG = AgentConfig(model="m")
RUN = {
    "dataset": "Bamboogle",
    "subset": "full_test",
    "model": "m",
    "agent_config": CONFIG.to_dict(),
    "fingerprint": "f1",
}


def record(item_id, status="submitted", f1=1.0):
    ep = Episode(messages=[{"role": "user", "content": "Q"}], status=status, predicted_answer="A")
    item = QAItem(item_id, "Q", "A", (), "default", "Bamboogle")
    scores = None if status == "error" else {"f1": f1}
    return EpisodeRecord.from_episode(item, 0, ep, CONFIG, tool_schemas(), "f1", scores)


def test_prepare_run_refuses_another_run(tmp_path):
    prepare_run(tmp_path, RUN)
    prepare_run(tmp_path, {**RUN, "items": 125})  # not part of the identity
    assert json.loads((tmp_path / "run.json").read_text())["fingerprint"] == "f1"
    for key, value in [("fingerprint", "f2"), ("model", "other"), ("subset", "random_300")]:
        with pytest.raises(RunMismatchError, match=key):
            prepare_run(tmp_path, {**RUN, key: value})
    with pytest.raises(RunMismatchError, match="agent_config"):
        prepare_run(tmp_path, {**RUN, "agent_config": AgentConfig(model="m", temperature=0.0).to_dict()})


def test_parts_are_atomic_and_the_last_record_wins(tmp_path):
    first = PartWriter(tmp_path, "20260101T000000-aaaaaa-w000", rows_per_part=2)
    first.add(record("a", "error"))
    assert recorded_status(tmp_path) == {}  # buffered, nothing on disk yet
    first.add(record("b"))
    assert recorded_status(tmp_path) == {"a": "error", "b": "submitted"}
    second = PartWriter(tmp_path, "20260102T000000-bbbbbb-w000", rows_per_part=10)
    second.add(record("a", "submitted", 0.5))
    assert second.flush().name == "part-20260102T000000-bbbbbb-w000-00000.parquet"
    assert second.flush() is None
    assert [p.name.startswith(".") for p in (tmp_path / "parts").iterdir()] == [False, False]
    assert recorded_status(tmp_path) == {"a": "submitted", "b": "submitted"}
    assert recorded_status(tmp_path, "20260102T000000-bbbbbb") == {"a": "submitted"}
    assert load_table(tmp_path, ["id", "f1"]).to_pylist() == [{"id": "b", "f1": 1.0}, {"id": "a", "f1": 0.5}]
    assert [r.id for r in load_records(tmp_path)] == ["b", "a"]
    assert load_table(tmp_path / "nothing", ["id"]).num_rows == 0


def test_a_damaged_part_is_named_then_moved_aside(tmp_path):
    writer = PartWriter(tmp_path, "20260101T000000-aaaaaa-w000", rows_per_part=2)
    for item_id in "abcd":
        writer.add(record(item_id))
    good, bad = part_files(tmp_path)
    bad.write_bytes(bad.read_bytes()[:-40])  # truncated, as by a full disk
    for load in (recorded_status, load_table, load_records):
        with pytest.raises(DamagedPartError) as caught:
            load(tmp_path)
        assert caught.value.path == bad and "\n" not in str(caught.value)
    assert move_damaged_parts(tmp_path) == [tmp_path / "damaged" / bad.name]
    assert (tmp_path / "damaged" / bad.name).stat().st_size > 0  # kept, not deleted
    assert part_files(tmp_path) == [good] and recorded_status(tmp_path) == {
        "a": "submitted",
        "b": "submitted",
    }
    assert move_damaged_parts(tmp_path) == []


def test_worker_runs_scores_and_writes(tmp_path):
    class Tools:
        def call_tool(self, name, arguments_json):
            return "1. [William Shakespeare](https://en.wikipedia.org/wiki/1#chunk-1)\n   - playwright"

    items = [
        QAItem(f"q{i}", f"Who wrote play {i}?", "William Shakespeare", (), "default", "Bamboogle")
        for i in range(5)
    ]

    async def go(url):
        worker = EpisodeWorker(
            str(tmp_path), "run-w000", CONFIG, {"base_url": url}, Tools, "fp", judge=None, rows_per_part=3
        )
        summaries = await asyncio.gather(*(worker.run(i, item) for i, item in enumerate(items)))
        worker.flush()
        return summaries

    with ScriptedLLMServer(policy="search_then_submit") as server:
        summaries = asyncio.run(go(server.url))
    assert [s["status"] for s in summaries] == ["submitted"] * 5
    assert all(s["f1"] == 1.0 and s["gpt_judge"] is None for s in summaries)
    assert len(list((tmp_path / "parts").iterdir())) == 2  # 3 + 2 rows
    records = sorted(load_records(tmp_path), key=lambda r: r.id)
    assert [(r.id, r.index, r.seed, r.predicted_answer, r.fingerprint) for r in records] == [
        (f"q{i}", i, 42 + i, "William Shakespeare", "fp") for i in range(5)
    ]
