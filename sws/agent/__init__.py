"""One agent episode over any OpenAI-compatible endpoint (CONTRACT.md §6).

The scripted OpenAI-compatible server for tests and demos is ``sws.agent.scripted_server`` (not imported
here: it pulls in FastAPI and uvicorn).
"""

from sws.agent.episode import STOP_CONTEXT_EXHAUSTED, STOP_MAX_ROUNDS, STOP_SUBMITTED, Episode, SearchAgent
from sws.agent.family import model_family
from sws.agent.history import compress_history
from sws.agent.llm import (
    ContextExhaustedError,
    LLMEndpoint,
    LLMEndpointError,
    LLMSettings,
    LLMTimeoutError,
    is_context_overflow,
    is_transient_llm_error,
)
from sws.agent.policies import HEURISTIC_MODEL, POLICIES, heuristic_answer
from sws.agent.prompts import (
    NUDGE_AFTER_EMPTY,
    NUDGE_AFTER_TEXT,
    round_budget_message,
    system_prompt,
)
from sws.agent.tools import ToolBox, ToolRunner
from sws.config.agent import TOOL_CHOICES, AgentConfig

__all__ = [
    "HEURISTIC_MODEL",
    "NUDGE_AFTER_EMPTY",
    "NUDGE_AFTER_TEXT",
    "POLICIES",
    "STOP_CONTEXT_EXHAUSTED",
    "STOP_MAX_ROUNDS",
    "STOP_SUBMITTED",
    "TOOL_CHOICES",
    "AgentConfig",
    "ContextExhaustedError",
    "Episode",
    "LLMEndpoint",
    "LLMEndpointError",
    "LLMSettings",
    "LLMTimeoutError",
    "SearchAgent",
    "ToolBox",
    "ToolRunner",
    "compress_history",
    "heuristic_answer",
    "is_context_overflow",
    "is_transient_llm_error",
    "model_family",
    "round_budget_message",
    "system_prompt",
]
