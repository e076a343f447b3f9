"""The ``eval`` section: an evaluation run (``sws eval``, ``ray_jobs/evaluate.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sws.config.agent import AgentConfig


@dataclass
class EvalConfig:
    out: str = "sws-out/runs"  # results go to <out>/<dataset>-<subset label>-<model>
    subset: str = "full_test"  # full_test | random_300 | path of an id list (--qa-root: the first two)
    seed: int = 42  # sws's random_300 resample of --data (episode i: seeded agent.seed + i, per the contract)
    llm_base_url: str | None = None  # None: the scripted heuristic baseline (no LLM), labelled as such
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 64  # requests in flight to the LLM endpoint, all workers together
    timeout_s: float = 600.0  # per LLM request
    workers: int = 2  # episode-worker actors
    episodes_per_worker: int = 64  # concurrent episodes per worker (the bounded queue)
    worker_num_cpus: float = 0.5
    agent: AgentConfig = field(default_factory=AgentConfig)  # its model: eval.model
    judge: bool = False  # score with the LLM judge (CONTRACT.md §7.3)
    judge_model: str = "gpt-5.4-mini"
    judge_base_url: str | None = "https://api.openai.com/v1"  # None: the agent's endpoint (its served model)
    judge_api_key_env: str = "OPENAI_API_KEY"
    judge_variant: str = "repository"  # repository | paper
    # the tools offered to the model, by registered name (tools.modules registers more); None: the contract's three
    tools: list[str] | None = None

    def __post_init__(self):
        if self.agent.model is not None:
            raise ValueError(
                f"eval.agent.model={self.agent.model!r}: the run's model is eval.model (--model)"
            )
