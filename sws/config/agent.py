"""The agent's settings: ``sws.agent.SearchAgent``'s config, and a profile's ``eval.agent``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

TOOL_CHOICES = ("auto", "required")  # auto: the paper; required: every round a tool call (models that never
# call tools on auto), submit_answer ends the episode


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """The model and sampling settings of a run (the reference's defaults); saved with every record.

    In a profile this is ``eval.agent``, whose ``model`` stays unset: the run's model is ``eval.model``
    (``--model``). A small context needs fewer rounds, shorter completions and shorter kept tool results; the
    observations themselves (hits per search, characters per hit) are the tools' ``max_top_k`` and
    ``snippet_chars`` (``serve.tools``, ``tools.tools``). ``tool_choice`` is sent with every request
    (:data:`TOOL_CHOICES`); episode ``i`` of a run is seeded ``seed + i``.
    """

    model: str | None = None
    tool_choice: str = "auto"
    max_round: int = 20
    max_tool_calls_per_step: int = 5
    temperature: float = 0.7
    top_p: float = 0.95
    max_completion_tokens: int = 1024
    seed: int = 42
    keep_recent_tool_results: int = 1  # tool results kept whole in each request; older ones are cut to
    tool_result_max_chars: int = 2048  # this many characters
    round_budget_reminder: bool = True

    def __post_init__(self):
        if self.max_round < 1 or self.max_tool_calls_per_step < 1:
            raise ValueError(f"max_round and max_tool_calls_per_step must be >= 1: {self}")
        if self.tool_choice not in TOOL_CHOICES:
            raise ValueError(f"tool_choice={self.tool_choice!r}: expected one of {TOOL_CHOICES}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
