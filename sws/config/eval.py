"""The ``eval`` section: an evaluation run (``sws eval``, ``ray_jobs/evaluate.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class AgentSettings:
    """What a profile sets of the agent (``sws.agent.AgentConfig``, whose defaults these are; the model is
    ``eval.model``). A small context needs fewer rounds, shorter completions and shorter kept tool results; the
    observations themselves (hits per search, characters per hit) are the tools' ``max_top_k`` and
    ``snippet_chars`` (``serve.tools``, ``tools.tools``)."""

    tool_choice: str = "auto"  # auto: the paper | required: every round a tool call (models that never call
    # tools on auto), submit_answer ends the episode
    max_round: int = 20
    max_completion_tokens: int = 1024
    keep_recent_tool_results: int = 1
    tool_result_max_chars: int = 2048


@dataclass
class EvalConfig:
    out: str = "sws-out/runs"  # results go to <out>/<dataset>-<subset>-<model>
    subset: str = "full_test"  # full_test | random_300 | path of an id list
    seed: int = 42  # random_300 sampling (episode seeds are 42 + index, per the contract)
    llm_base_url: str | None = None  # None: the scripted heuristic baseline (no LLM), labelled as such
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 64  # requests in flight to the LLM endpoint, all workers together
    timeout_s: float = 600.0  # per LLM request
    workers: int = 2  # episode-worker actors
    episodes_per_worker: int = 64  # concurrent episodes per worker (the bounded queue)
    worker_num_cpus: float = 0.5
    agent: AgentSettings = field(default_factory=AgentSettings)
    judge: bool = False  # score with the LLM judge (CONTRACT.md §7.3)
    judge_model: str = "gpt-5.4-mini"
    judge_base_url: str | None = "https://api.openai.com/v1"  # None: the agent's endpoint (its served model)
    judge_api_key_env: str = "OPENAI_API_KEY"
    judge_variant: str = "repository"  # repository | paper
