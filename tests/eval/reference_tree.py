"""Builders of reference output files (CONTRACT.md §6.10) for the tests of sws.eval.reference_runs."""

import json


def call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool(call_id, name, content, seconds=0.1):
    return {"tool_call_id": call_id, "role": "tool", "name": name, "content": content, "duration_s": seconds}


def assistant(content, *calls, seconds=0.5):
    return {"content": content, "role": "assistant", "tool_calls": list(calls) or None, "duration_s": seconds}


MESSAGES = [
    {"role": "system", "content": "system prompt"},
    {"role": "user", "content": "Who wrote it?"},
    assistant("", call("c1", "search", {"query": "it"}), call("c2", "open_url", {"url": "u"})),
    tool("c1", "search", "hits"),
    tool("c2", "open_url", json.dumps({"status": "error", "error": "not found"})),
    assistant("thinking"),
    {"role": "user", "content": "Plain-text responses are ignored."},
    assistant("", call("c3", "submit_answer", {"answer": "Ann"})),
    tool("c3", "submit_answer", json.dumps({"status": "done", "answer": "Ann"}), seconds=0.0),
]


def reference_json(qid, f1=1.0, judge=1, **changes):
    """One ``{qid}.json`` object as the reference runner writes it (``judge`` None: no verdict)."""
    scores = {
        "em": f1,
        "em_substring": f1,
        "em_cover": f1,
        "f1": f1,
        "precision": f1,
        "recall": f1,
        "f1_bool": f1,
    }
    if judge is not None:
        scores["gpt_judge"] = judge
    return {
        "id": qid,
        "type": "default",
        "question": "Who wrote it?",
        "answer": "Ann",
        "answer_aliases": [],
        "model": "Qwen/Qwen3.5-9B",
        "messages": MESSAGES,
        "tools": [],
        "predicted_answer": "Ann",
        "stop_reason": "Tool submitted final answer",
        "time_cost": 2.5,
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        "eval": scores,
    } | changes


def write(folder, name, obj):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
