"""Episode records: the reference's JSON object and a Parquet row that round-trips."""

import asyncio
import json

import pyarrow as pa
import pyarrow.parquet as pq

from sws.agent import AgentConfig, LLMEndpoint, SearchAgent
from sws.agent.scripted_server import ScriptedLLMServer
from sws.env import tool_schemas
from sws.eval import RECORD_SCHEMA, EpisodeRecord, QAItem, score_prediction

ITEM = QAItem("q1", "Who wrote Hamlet? ", "William Shakespeare", ("Shakespeare",), "default", "Bamboogle")


class Tools:
    def call_tool(self, name, arguments_json):
        return "1. [Shakespeare](https://en.wikipedia.org/wiki/1#chunk-1)\n   - William Shakespeare wrote Hamlet."


def episode(script):
    async def go(url):
        llm = LLMEndpoint(url)
        config = AgentConfig(model="Qwen3.5-9B")
        ep = await SearchAgent(llm, Tools(), config).run(ITEM.question, index=3)
        await llm.close()
        return ep, config

    with ScriptedLLMServer(script=script) as server:
        return asyncio.run(go(server.url))


def test_record_json_and_parquet_round_trip(tmp_path):
    script = [
        {"content": "facts: none", "tool_calls": [["search", {"query": "Hamlet author"}], ["browse", {}]]},
        {"tool_calls": [["submit_answer", {"answer": "Shakespeare"}]]},
    ]
    ep, config = episode(script)
    scores = asyncio.run(score_prediction(ITEM, ep.predicted_answer))
    record = EpisodeRecord.from_episode(ITEM, 3, ep, config, tool_schemas(), "fp-123", scores)
    doc = record.to_json()
    assert list(doc) == [
        "id", "type", "question", "answer", "answer_aliases", "model", "messages", "tools",
        "predicted_answer", "stop_reason", "time_cost", "usage", "eval",
    ]  # fmt: skip
    assert (doc["id"], doc["question"], doc["answer_aliases"], doc["model"]) == (
        "q1",
        "Who wrote Hamlet? ",
        ["Shakespeare"],
        "Qwen3.5-9B",
    )
    assert doc["eval"]["em"] == 1.0 and "gpt_judge" not in doc["eval"]
    assert doc["stop_reason"] == "Tool submitted final answer"
    json.dumps(doc, ensure_ascii=False)  # serialisable as the reference's {qid}.json
    counts = (
        record.rounds,
        record.search_calls,
        record.submit_calls,
        record.unknown_tool_calls,
        record.tool_errors,
    )
    assert counts == (2, 1, 1, 1, 1)
    assert (record.seed, record.index, record.fingerprint, record.agent_config["temperature"]) == (
        45,
        3,
        "fp-123",
        0.7,
    )

    table = pa.Table.from_pylist([record.to_row()], schema=RECORD_SCHEMA)
    pq.write_table(table, tmp_path / "part.parquet")
    (row,) = pq.read_table(tmp_path / "part.parquet").to_pylist()
    assert EpisodeRecord.from_row(row) == record


def test_failed_episode_row_has_no_eval():
    ep, config = episode([{"tool_calls": [["search", {"query": "x"}]]}])
    ep.status, ep.error_type, ep.error, ep.stop_reason = "error", "FatalToolError", "down", None
    record = EpisodeRecord.from_episode(ITEM, 0, ep, config, tool_schemas(), "fp")
    row = record.to_row()
    assert (row["f1"], row["gpt_judge"], row["status"], row["stop_reason"]) == (None, None, "error", None)
    pa.Table.from_pylist([row], schema=RECORD_SCHEMA)
    judged = EpisodeRecord.from_row({**row, "f1": 0.5, "gpt_judge": 1})
    assert judged.eval["gpt_judge"] == 1
    assert EpisodeRecord.from_row(row).eval is None
