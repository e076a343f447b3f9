"""Golden strings of the loop (CONTRACT.md §6.2, §6.3), pinned byte for byte."""

from sws.agent import (
    NUDGE_AFTER_EMPTY,
    NUDGE_AFTER_TEXT,
    compress_history,
    round_budget_message,
    system_prompt,
)
from sws.agent.prompts import nudge_message

SYSTEM_PROMPT = (
    "You are a research assistant. Answer the user question using provided tools.\n"
    "\n"
    "Rules:\n"
    "- Tool observation history is compressed: only the latest 1 tool result(s) stay in full; older tool messages "
    "are truncated to at most 2048 characters each and may no longer be visible in later rounds.\n"
    "- Before each tool call, write brief reasoning in the assistant message (the text before tool calls). Record "
    "durable facts there: extracted field values, disambiguation decisions, entity-page mappings, and your "
    "next-step plan. Reasoning stays in history; truncated tool dumps do not\u2014do not rely on long-ago tool text "
    "remaining available.\n"
    "- Keep pre-tool reasoning compact. Do not restate the question, do not paste long tool outputs, and do not "
    "add unnecessary narration.\n"
    "- Use focused searches: one query = one reasoning hop; try not to combine multiple hops in one query.\n"
    "- You may call multiple independent tools in one step.\n"
    "- Avoid low-gain searches. Do not re-search the same entity-attribute pair with minor rewording once you "
    "already have overlapping results or a relevant page.\n"
    "- For time-varying facts (e.g., headquarters, ownership, operator, affiliation, location), match the "
    "question's time scope.\n"
    "- Never fabricate URLs; only use URLs from search results.\n"
    "- If search results or opened pages already provide enough evidence, stop searching and submit.\n"
    "- You MUST end by calling `submit_answer` with a short exact answer string, or one Markdown table if the "
    "question asks for a table.\n"
    "\n"
    "- Treat `think` as a short scratchpad, not a full chain-of-thought transcript.\n"
    "- Prefer at most three compact lines in this order: `facts`, `gap`, `next`.\n"
    "- Keep only durable facts, disambiguation decisions, and the immediate next action.\n"
    "- Do not restate the question, do not copy long observations, and target roughly 100 tokens."
)
REMINDER_16_OF_20 = (
    "[Round budget] You have used 16 of 20 tool-calling rounds; only 4 round(s) remain. If you already have enough "
    "evidence, call the `submit_answer` tool with your final answer; otherwise prioritize decisive searches and "
    "submit before the budget runs out."
)


def test_system_prompt():
    assert system_prompt() == SYSTEM_PROMPT
    assert "only the latest 3 tool result(s)" in system_prompt(3, 100)
    assert "at most 100 characters each" in system_prompt(3, 100)


def test_nudges_and_reminder():
    assert NUDGE_AFTER_TEXT == (
        "Plain-text responses are ignored. Please call the `submit_answer` tool with your final answer, or call "
        "another tool to continue investigating."
    )
    assert NUDGE_AFTER_EMPTY == (
        "You must use tools to proceed. When you are ready to finalize, call the `submit_answer` tool with your "
        "final answer. Do not answer in plain text."
    )
    assert nudge_message(" text ") == NUDGE_AFTER_TEXT
    assert nudge_message(" \n") == nudge_message(None) == NUDGE_AFTER_EMPTY
    assert round_budget_message(16, 20) == REMINDER_16_OF_20


def test_compress_history_keeps_last_tool_message_only():
    def tool(call_id, content):
        return {"role": "tool", "tool_call_id": call_id, "name": "search", "content": content}

    history = [
        {"role": "user", "content": "u" * 5000},
        tool("a", "a" * 3000),
        tool("b", "b" * 2048),
        {"role": "assistant", "content": "x" * 5000},
        tool("c", "c" * 2049),
        tool("d", "d" * 9000),
    ]
    out = compress_history(history)
    assert out[0] is history[0] and out[3] is history[3]  # non-tool messages untouched
    assert out[1]["content"] == "a" * 2048 + "...[truncated 952 chars]"
    assert out[2] is history[2]  # exactly at the limit
    assert out[4]["content"] == "c" * 2048 + "...[truncated 1 chars]"
    assert out[5] is history[5]  # the most recent tool message stays whole
    assert out[1]["tool_call_id"] == "a" and history[1]["content"] == "a" * 3000  # a copy
    kept2 = compress_history(history, keep_recent_tool_results=2, tool_result_max_chars=10)
    assert [m["content"][:12] for m in kept2[1:3]] == ["a" * 10 + "..", "b" * 10 + ".."]
    assert kept2[4] is history[4]
