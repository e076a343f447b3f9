"""The results directory without Ray: run.json checks, atomic part files, last-record-wins, the worker."""

import asyncio
import json
import os
import re

import pytest

from sws.agent import AgentConfig, Episode, LLMSettings
from sws.agent.scripted_server import ScriptedLLMServer
from sws.env import tool_schemas
from sws.eval import QAItem
from sws.eval.datasets import ids_sha256
from sws.eval.lock import RunLockedError, run_lock
from sws.eval.records import EpisodeRecord
from sws.eval.results import (
    DamagedPartError,
    PartWriter,
    load_records,
    load_table,
    move_damaged_parts,
    part_files,
    prepare_run,
    recorded_status,
)
from sws.eval.run_meta import DamagedRunError, RunMismatchError, read_run_meta
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
    prepare_run(tmp_path, {**RUN, "llm_base_url": "http://other/v1"})  # not part of the identity
    assert json.loads((tmp_path / "run.json").read_text())["fingerprint"] == "f1"
    for key, value in [("fingerprint", "f2"), ("model", "other"), ("subset", "random_300")]:
        with pytest.raises(RunMismatchError, match=key):
            prepare_run(tmp_path, {**RUN, key: value})
    with pytest.raises(RunMismatchError, match="agent_config"):
        prepare_run(tmp_path, {**RUN, "agent_config": AgentConfig(model="m", temperature=0.0).to_dict()})


def test_the_inputs_and_the_selection_are_the_identity(tmp_path):
    """The issue's cases: a second --data file with the ids of the first, another sampling seed, a larger
    --limit; each refused with what differs, the larger selection allowed with ``extend`` and recorded."""
    run = {**RUN, "data_sha256": "a" * 64, "subset": "random_300", "sampling_seed": 42}
    ids = [f"q{i}" for i in range(6)]
    prepare_run(tmp_path, run, ids[:3])
    cases = [
        ({**run, "data_sha256": "b" * 64}, ids[:3], r"data_sha256 aaaaaaaaaaaa… → bbbbbbbbbbbb…"),
        ({**run, "sampling_seed": 7}, ids[:3], "sampling_seed 42 → 7"),
        (run, ids, "holds a run of 3 items, not these 6; add --extend"),
        (run, ["q9", "q1", "q2"], "another selection of 3 items; add --extend"),
    ]
    for changed, selection, message in cases:
        with pytest.raises(RunMismatchError, match=message) as caught:
            prepare_run(tmp_path, changed, selection)
        assert "\n" not in str(caught.value)
    for selection in (["q9", *ids[1:]], ids[:2]):  # not only more items after the recorded ones
        with pytest.raises(RunMismatchError, match="--extend only adds items after the 3"):
            prepare_run(tmp_path, run, selection, extend=True)
    before = (tmp_path / "run.json").read_text()
    assert (
        prepare_run(tmp_path, run, ids[:3], extend=True).items == 3
        and (tmp_path / "run.json").read_text() == before
    )
    meta = prepare_run(tmp_path, run, ids, extend=True)
    saved = json.loads((tmp_path / "run.json").read_text())
    assert saved["items"] == meta.items == 6 and saved["ids_sha256"] == ids_sha256(ids)
    assert [(e["from_items"], e["items"]) for e in saved["extended"]] == [(3, 6)]
    prepare_run(tmp_path, run, ids)  # the extended run resumes as it now stands


def test_the_papers_random_300_and_sws_resample_never_resume_into_each_other(tmp_path):
    """run.json labels the subset; a resume of the other kind is refused naming both kinds."""
    paper = {**RUN, "subset": "random_300", "data_source": "reference", "data_path": "ds/random_300/B.json"}
    resample = {**RUN, "subset": "random_300", "sampling_seed": 42, "data_path": "qa/b.jsonl"}
    for first, then, message in [
        (paper, resample, "holds a run of random_300, not random_300 (sws resample, seed 42) ("),
        (resample, paper, "holds a run of random_300 (sws resample, seed 42), not random_300 ("),
    ]:
        out = tmp_path / first["data_path"].split("/")[0]
        prepare_run(out, first, ["q1"])
        assert read_run_meta(out).subset_label == json.loads((out / "run.json").read_text())["subset_label"]
        with pytest.raises(RunMismatchError, match=re.escape(f"{out} {message}")) as caught:
            prepare_run(out, then, ["q1"])
        assert "data_source " in str(caught.value) and "\n" not in str(caught.value)
    saved = json.loads((tmp_path / "ds" / "run.json").read_text())
    assert (saved["subset_label"], saved["data_path"], saved["sampling_seed"]) == (
        "random_300",
        "ds/random_300/B.json",
        None,
    )
    assert json.loads((tmp_path / "qa" / "run.json").read_text())["subset_label"] == (
        "random_300 (sws resample, seed 42)"
    )


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"items": "abc"}, "items: Input should be a valid integer"),
        ({"model": ["x"]}, "model: Input should be a valid string"),
        ({"items": -3}, "items: Input should be greater than or equal to 0"),
        ("[1, 2]", "the top level: Input should be a valid dictionary"),
        ('{"dataset": "Bamb', "JSONDecodeError: Unterminated string"),
    ],
)
def test_a_mistyped_run_json_is_damaged(tmp_path, change, reason):
    """The issue's ``"items": "abc"`` and ``"model": ["x"]``, and run.json files not holding a JSON object."""
    prepare_run(tmp_path, RUN)
    saved = json.loads((tmp_path / "run.json").read_text())
    broken = change if isinstance(change, str) else json.dumps({**saved, **change})
    (tmp_path / "run.json").write_text(broken)
    for call in (lambda: read_run_meta(tmp_path), lambda: prepare_run(tmp_path, RUN)):
        with pytest.raises(DamagedRunError) as caught:
            call()
        assert caught.value.reason.startswith(reason) and "\n" not in str(caught.value)
        assert str(caught.value).startswith(f"{tmp_path / 'run.json'} is damaged: ")
    assert (tmp_path / "run.json").read_text() == broken  # left as it was


def test_run_lock_names_the_holder_and_is_released(tmp_path):
    holder = f"in use by another sws eval \\(PID {os.getpid()}\\)"
    with run_lock(tmp_path), pytest.raises(RunLockedError, match=holder), run_lock(tmp_path):
        pass
    with run_lock(tmp_path):  # released on exit
        pass


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
            str(tmp_path), "run-w000", CONFIG, LLMSettings(url), Tools, "fp", judge=None, rows_per_part=3
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


def test_a_record_that_cannot_be_written_is_an_error_and_the_others_are_kept(tmp_path):
    """The issue: a lone surrogate (``\\ud83d``) in one record made ``flush`` raise and lost all 81. Now the
    others are written and that one is recorded as an ``error`` saying why (a resume runs it again)."""
    writer = PartWriter(tmp_path, "20260101T000000-aaaaaa-w000", rows_per_part=10)
    bad = record("b")
    bad.predicted_answer = "A \ud83d"  # as a model's JSON answer "A \\ud83d" decodes
    bad.messages.append({"role": "assistant", "content": "\ud83d"})
    for rec in (record("a"), bad, record("c")):
        writer.add(rec)
    assert writer.flush() is not None
    assert recorded_status(tmp_path) == {"a": "submitted", "b": "error", "c": "submitted"}
    by_id = {r.id: r for r in load_records(tmp_path)}
    assert by_id["b"].error_type == "RecordWriteError" and "surrogates not allowed" in by_id["b"].error
    assert by_id["b"].eval is None and by_id["b"].predicted_answer == "A \ufffd"
    assert by_id["b"].messages[-1]["content"] == "\ufffd"
    assert [(by_id[i].predicted_answer, by_id[i].eval["f1"]) for i in "ac"] == [("A", 1.0)] * 2


def test_a_part_of_another_schema_is_damaged(tmp_path):
    """The issue: a part whose ``f1`` holds strings broke report and UI; a corpus Parquet dropped into
    ``parts/`` was counted as an episode. Either is a damaged part naming the column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sws.corpus.schema import DOCS
    from sws.eval.records import RECORD_SCHEMA

    writer = PartWriter(tmp_path, "20260101T000000-aaaaaa-w000", rows_per_part=2)
    for item_id in "ab":
        writer.add(record(item_id))
    (good,) = part_files(tmp_path)
    table = pq.read_table(good)
    f1 = RECORD_SCHEMA.get_field_index("f1")
    strings = table.set_column(f1, "f1", pa.array(["1.0", "0.5"]))
    corpus = pa.Table.from_pylist([{"page_id": 1, "title": "T", "markdown": "M"}], schema=DOCS)
    cases = [(strings, "column f1 is string, not double"), (corpus, "not a results part (no column id)")]
    for bad_table, reason in cases:
        bad = tmp_path / "parts" / "part-20260102T000000-bbbbbb-w000-00000.parquet"
        pq.write_table(bad_table, bad)
        for load in (recorded_status, load_table, load_records):
            with pytest.raises(DamagedPartError) as caught:
                load(tmp_path)
            assert caught.value.path == bad and caught.value.reason == reason
        assert move_damaged_parts(tmp_path)[0].parent == tmp_path / "damaged"
        assert part_files(tmp_path) == [good] and recorded_status(tmp_path) == {
            "a": "submitted",
            "b": "submitted",
        }
