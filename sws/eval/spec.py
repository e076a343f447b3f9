"""One evaluation run, as :func:`sws.eval.run_evaluation` takes it: what to run, against which environment and
endpoints, and how much at once; checked when made, before any worker starts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sws.agent import AgentConfig, LLMSettings, ToolBox
from sws.env import DEFAULT_OPTIONS, import_tool_modules, schemas_of
from sws.eval.datasets import DataSource, QAItem
from sws.eval.judge import JudgeSettings


@dataclass(frozen=True)
class EvalSpec:
    """An evaluation run.

    Args:
        items: the selected questions; an item's position seeds its episode.
        out_dir: the results directory (``run.json``, part files).
        agent: model and sampling settings (its ``model`` set).
        llm: the actor's endpoint; its ``max_concurrency`` is for the endpoint as a whole, split evenly
            across the workers.
        tools: builds the tools' client inside each worker (it must pickle: a class, a partial,
            ``sws.transport.tool_client_factory``).
        tool_modules: modules whose tools register when imported (``sws.env.register_tool``): imported here and
            in each worker before its client is built.
        offered_tools: the tools offered to the model, by registered name; empty: the client's own (the
            contract's three).
        fingerprint: the environment's fingerprint, stored in every record.
        query_embedding: how the environment embeds queries, recorded in ``run.json`` as at the run's start.
        judge: the LLM judge's settings; None: no judge.
        dataset, subset, data_sha256, sampling_seed, data_source: the inputs' identity (``sws.eval.run_meta``;
            ``data_source`` ``reference``: the reference's QA archive's file, ``sws.eval.questions``).
        data_path: the file the items were read from, recorded in ``run.json``.
        extend: a resume may add items after those the run already selected.
        repair: first move unreadable part files to ``out_dir/damaged/`` (their ids run again).
        workers: episode-worker actors.
        episodes_per_worker: episodes in flight per worker (the bounded queue).
        worker_num_cpus: CPUs Ray reserves per worker.
        rows_per_part: records per part file.
        max_passes: passes over the episodes lost with a worker before giving up on them.
        progress: show a progress bar.
    """

    items: Sequence[QAItem]
    out_dir: Path
    agent: AgentConfig
    llm: LLMSettings
    tools: Callable[[], ToolBox]
    fingerprint: str
    query_embedding: dict[str, Any] | None = None
    judge: JudgeSettings | None = None
    dataset: str = ""
    subset: str = "full_test"
    data_sha256: str | None = None
    sampling_seed: int | None = None
    data_source: DataSource = "file"
    data_path: str | None = None
    extend: bool = False
    repair: bool = False
    workers: int = 2
    episodes_per_worker: int = 64
    worker_num_cpus: float = 0.5
    rows_per_part: int = 64
    max_passes: int = 3
    progress: bool = True
    tool_modules: tuple[str, ...] = ()
    offered_tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        import_tool_modules(self.tool_modules)
        schemas_of(self.offered_tools, DEFAULT_OPTIONS)  # every name is a registered tool
        if not self.agent.model:
            raise ValueError(f"agent.model is needed (the model to ask): {self.agent}")
        for name in ("workers", "episodes_per_worker", "rows_per_part", "max_passes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: must be >= 1")
        if self.worker_num_cpus < 0:
            raise ValueError(f"worker_num_cpus={self.worker_num_cpus}: must be >= 0")

    @property
    def identity(self) -> dict[str, Any]:
        """What ``run.json`` records of the run, and a resume must match (``sws.eval.run_meta``)."""
        return {
            "dataset": self.dataset,
            "data_path": self.data_path,
            "data_sha256": self.data_sha256,
            "data_source": self.data_source,
            "subset": self.subset,
            "sampling_seed": self.sampling_seed,
            "model": self.agent.model,
            "agent_config": self.agent.to_dict(),
            "fingerprint": self.fingerprint,
            "query_embedding": self.query_embedding,
            "llm_base_url": self.llm.base_url,
            "judge": {"model": self.judge.model, "variant": self.judge.variant} if self.judge else None,
        }
