"""The strings the model sees from the loop itself (CONTRACT.md §6.2, §6.3), byte for byte."""

from __future__ import annotations

from sws.config.agent import AgentConfig

_DEFAULT = AgentConfig()
SYSTEM_PROMPT_TEMPLATE = """\
You are a research assistant. Answer the user question using provided tools.

Rules:
- Tool observation history is compressed: only the latest {keep_recent_tool_results} tool result(s) stay in full; \
older tool messages are truncated to at most {tool_result_max_chars} characters each and may no longer be visible \
in later rounds.
- Before each tool call, write brief reasoning in the assistant message (the text before tool calls). Record \
durable facts there: extracted field values, disambiguation decisions, entity-page mappings, and your next-step \
plan. Reasoning stays in history; truncated tool dumps do not\u2014do not rely on long-ago tool text remaining \
available.
- Keep pre-tool reasoning compact. Do not restate the question, do not paste long tool outputs, and do not add \
unnecessary narration.
- Use focused searches: one query = one reasoning hop; try not to combine multiple hops in one query.
- You may call multiple independent tools in one step.
- Avoid low-gain searches. Do not re-search the same entity-attribute pair with minor rewording once you already \
have overlapping results or a relevant page.
- For time-varying facts (e.g., headquarters, ownership, operator, affiliation, location), match the question's \
time scope.
- Never fabricate URLs; only use URLs from search results.
- If search results or opened pages already provide enough evidence, stop searching and submit.
- You MUST end by calling `submit_answer` with a short exact answer string, or one Markdown table if the question \
asks for a table.
"""

SCRATCHPAD_BLOCK = """\
- Treat `think` as a short scratchpad, not a full chain-of-thought transcript.
- Prefer at most three compact lines in this order: `facts`, `gap`, `next`.
- Keep only durable facts, disambiguation decisions, and the immediate next action.
- Do not restate the question, do not copy long observations, and target roughly 100 tokens.
"""

NUDGE_AFTER_TEXT = (
    "Plain-text responses are ignored. Please call the `submit_answer` tool with your final answer, "
    "or call another tool to continue investigating."
)
NUDGE_AFTER_EMPTY = (
    "You must use tools to proceed. When you are ready to finalize, call the `submit_answer` tool "
    "with your final answer. Do not answer in plain text."
)
ROUND_BUDGET_TEMPLATE = (
    "[Round budget] You have used {used} of {max_round} tool-calling rounds; only {left} round(s) remain. "
    "If you already have enough evidence, call the `submit_answer` tool with your final answer; "
    "otherwise prioritize decisive searches and submit before the budget runs out."
)
INVALID_TOOL_NAME_NOTICE = (
    "[Invalid tool call rejected by serving validator]\n- Function name was {name} but must be a-z, A-Z, 0-9, "
    "or contain underscores and dashes, with a maximum length of 64.\nFix the tool call and try again."
)


def system_prompt(
    keep_recent_tool_results: int = _DEFAULT.keep_recent_tool_results,
    tool_result_max_chars: int = _DEFAULT.tool_result_max_chars,
) -> str:
    """The rendered system prompt: the rules, a blank line, the scratchpad block, stripped."""
    rules = SYSTEM_PROMPT_TEMPLATE.format(
        keep_recent_tool_results=keep_recent_tool_results, tool_result_max_chars=tool_result_max_chars
    )
    return f"{rules.strip()}\n\n{SCRATCHPAD_BLOCK.strip()}".strip()


def round_budget_message(round_id: int, max_round: int) -> str:
    """The one-time reminder sent before LLM call ``round_id + 1``."""
    return ROUND_BUDGET_TEMPLATE.format(used=round_id, max_round=max_round, left=max_round - round_id)


def nudge_message(assistant_content: str | None) -> str:
    """The user message after a round without tool calls."""
    return NUDGE_AFTER_TEXT if (assistant_content or "").strip() else NUDGE_AFTER_EMPTY
