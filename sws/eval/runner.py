"""Evaluation at scale: episode-worker Ray actors, each running many episodes on asyncio.

The driver keeps at most ``workers * episodes_per_worker`` episodes in flight (the bounded queue: new work is
submitted only as episodes finish), so memory stays flat however many items there are. Workers write their
records straight to Parquet part files; only a small summary per episode comes back to the driver.

Resume: ids whose latest record is ``submitted``, ``max_rounds`` or ``context_exhausted`` (a defined outcome:
the history outgrew the model's context) are skipped, errored ids are run again,
and a directory of another run (inputs, selection, model, agent config or environment; ``sws.eval.run_meta``)
is refused, as is one another process is running in (``sws.eval.lock``). Episodes lost with a dead actor or
an unflushed buffer are found by comparing the ids recorded by this invocation with those it was asked to
run, and are run again (up to ``max_passes``), so each one is recorded exactly once. SIGINT/SIGTERM stop the
run after flushing what has finished (``sws.eval.interrupt``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sws.agent import AgentConfig, LLMSettings, SearchAgent, ToolBox
from sws.env import DEFAULT_OPTIONS, import_tool_modules, schemas_of
from sws.eval.datasets import QAItem
from sws.eval.interrupt import EvalInterrupted, StopFlag, stop_signals
from sws.eval.judge import JudgeSettings
from sws.eval.lock import run_lock
from sws.eval.metrics import NO_JUDGE, judge_accuracy
from sws.eval.records import EpisodeRecord
from sws.eval.results import (
    PartWriter,
    load_table,
    move_damaged_parts,
    new_run_id,
    prepare_run,
    recorded_status,
)
from sws.eval.scoring import score_prediction
from sws.eval.spec import EvalSpec

logger = logging.getLogger(__name__)


class EpisodeWorker:
    """Runs episodes on one event loop and writes their records; a Ray actor via :func:`run_evaluation`.

    Args:
        out_dir: the results directory.
        prefix: part-file prefix, unique per worker and invocation (a restarted worker adds a new suffix).
        config: model and sampling settings.
        llm: this worker's endpoint (its share of the concurrency).
        tools_factory: builds the tools object inside the worker (it must pickle, e.g. a class or partial).
        fingerprint: the environment fingerprint stored in every record.
        judge: the judge's settings, or None for no judge.
        rows_per_part: records per part file.
        tool_modules: imported first: their tools register (``EvalSpec.tool_modules``).
        offered_tools: the tools offered to the model, described under the client's options; empty: the
            client's own.
    """

    def __init__(
        self,
        out_dir: str,
        prefix: str,
        config: AgentConfig,
        llm: LLMSettings,
        tools_factory: Callable[[], ToolBox],
        fingerprint: str,
        judge: JudgeSettings | None = None,
        rows_per_part: int = 64,
        tool_modules: tuple[str, ...] = (),
        offered_tools: tuple[str, ...] = (),
    ):
        import_tool_modules(tool_modules)
        self.config = config
        self.fingerprint = fingerprint
        tools = tools_factory()
        schemas = (
            schemas_of(offered_tools, getattr(tools, "options", DEFAULT_OPTIONS)) if offered_tools else None
        )
        self.agent = SearchAgent(llm.endpoint(), tools, config, schemas)
        self.judge = judge.judge() if judge is not None else None
        self.writer = PartWriter(out_dir, f"{prefix}-{uuid.uuid4().hex[:6]}", rows_per_part)

    async def run(self, index: int, item: QAItem) -> dict[str, Any]:
        """One episode, scored (unless it failed) and buffered for writing; returns a small summary."""
        episode = await self.agent.run(item.question, index)
        scores = None
        if episode.status != "error":
            scores = await score_prediction(item, episode.predicted_answer, self.judge)
        record = EpisodeRecord.from_episode(
            item, index, episode, self.config, self.agent.schemas, self.fingerprint, scores
        )
        self.writer.add(record)
        return {
            "id": item.id,
            "status": episode.status,
            "f1": (scores or {}).get("f1", 0.0),
            "gpt_judge": (scores or {}).get("gpt_judge"),
            "error": episode.error_type,
        }

    def flush(self) -> None:
        self.writer.flush()


@dataclass(frozen=True, slots=True)
class EvalSummary:
    """Counts over the selected items after a run: every item is recorded, errored or missing."""

    total: int
    recorded: int
    errored: int
    missing: list[str]
    ran: int
    elapsed_s: float
    f1: float
    gpt_judge: float | None  # None: no episode has a judge verdict (no judge ran)
    moved_aside: tuple[str, ...] = ()


def run_evaluation(spec: EvalSpec) -> EvalSummary:
    """Run every not-yet-recorded item of ``spec.items`` (index = position, which seeds the episode).

    Ray must be initialised (``sws.raykit.init_ray``). ``spec.out_dir`` is locked for the call
    (``sws.eval.lock``); a directory of another run is refused (``spec.identity``, ``sws.eval.run_meta``).

    Raises:
        RunLockedError: another process is running in ``out_dir``.
        RunMismatchError: ``out_dir`` holds another run.
        DamagedRunError: its ``run.json`` cannot be read.
        DamagedPartError: a part file cannot be read and ``spec.repair`` is off.
        EvalInterrupted: SIGINT or SIGTERM arrived; what had finished is recorded.
    """
    from tqdm import tqdm

    start = time.perf_counter()
    items, out_dir, workers = spec.items, spec.out_dir, spec.workers
    ids = [item.id for item in items]
    with run_lock(out_dir), stop_signals() as stop:
        prepare_run(out_dir, spec.identity, ids, spec.extend)
        moved = move_damaged_parts(out_dir) if spec.repair else []
        for path in moved:
            logger.warning("moved the damaged part %s aside; its episodes run again", path)
        status = recorded_status(out_dir)
        todo = [(i, item) for i, item in enumerate(items) if status.get(item.id) in (None, "error")]
        run_id = new_run_id()
        per_worker_llm = replace(spec.llm, max_concurrency=max(1, -(-spec.llm.max_concurrency // workers)))
        pool = _WorkerPool(
            workers,
            f"sws-eval-{run_id}",
            {
                "num_cpus": spec.worker_num_cpus,
                "max_concurrency": spec.episodes_per_worker + 2,
                "max_restarts": 0,
                "scheduling_strategy": "SPREAD",  # over the nodes: a lost node takes few episodes with it
            },
            (
                str(out_dir),
                run_id,
                spec.agent,
                per_worker_llm,
                spec.tools,
                spec.fingerprint,
                spec.judge,
                spec.rows_per_part,
                spec.tool_modules,
                spec.offered_tools,
            ),
        )
        bar = tqdm(
            total=len(items),
            initial=len(items) - len(todo),
            disable=not spec.progress,
            desc=spec.dataset or "eval",
        )
        scores = _Running(out_dir)
        pending = todo
        try:
            for _ in range(spec.max_passes):
                if not pending or stop.signum:
                    break
                _one_pass(pending, pool, spec.episodes_per_worker, bar, scores, stop)
                pool.flush()  # after a stop signal too: the finished episodes' buffered records
                written = recorded_status(out_dir, run_id)
                pending = [(i, item) for i, item in pending if item.id not in written]
                if pending and not stop.signum:
                    logger.warning("%d episode(s) were lost with a worker; running them again", len(pending))
        finally:
            bar.close()
            pool.kill()
        final = recorded_status(out_dir)
        if stop.signum:
            raise EvalInterrupted(stop.signum, sum(i in final for i in ids), len(ids), out_dir)
    selected = set(ids)
    rows = [r for r in load_table(out_dir, ["id", "f1", "gpt_judge"]).to_pylist() if r["id"] in selected]
    return EvalSummary(
        total=len(items),
        recorded=sum(i in final for i in ids),
        errored=sum(final.get(i) == "error" for i in ids),
        missing=[i for i in ids if i not in final],
        ran=len(todo),
        elapsed_s=time.perf_counter() - start,
        f1=sum(r["f1"] or 0.0 for r in rows) / max(1, len(items)),
        gpt_judge=judge_accuracy([r["gpt_judge"] for r in rows], len(items)),
        moved_aside=tuple(str(p) for p in moved),
    )


class _Running:
    """Running mean F1 / judge over recorded episodes (resumed ones included), for the progress bar."""

    def __init__(self, out_dir: Path):
        table = load_table(out_dir, ["f1", "gpt_judge"])
        self.n = table.num_rows
        self.f1 = sum(v or 0.0 for v in table["f1"].to_pylist())
        self.verdicts = [v for v in table["gpt_judge"].to_pylist() if v is not None]

    def add(self, summary: dict[str, Any]) -> str:
        self.n += 1
        self.f1 += summary["f1"] or 0.0
        if summary["gpt_judge"] is not None:
            self.verdicts.append(summary["gpt_judge"])
        judge = judge_accuracy(self.verdicts, self.n)
        return f"avg F1={100 * self.f1 / self.n:.2f} | avg llm_judge={NO_JUDGE if judge is None else f'{judge:.2f}'}"


class _WorkerPool:
    """Episode-worker actors; a dead one is replaced by a fresh actor (its lost episodes run again later)."""

    def __init__(self, size: int, name: str, options: dict[str, Any], args: tuple):
        import ray

        self._cls = ray.remote(EpisodeWorker)
        self._name, self._options, self._args = name, options, args
        self._generation = 0
        self.actors = [self._spawn(w) for w in range(size)]

    def _spawn(self, w: int):
        self._generation += 1
        out_dir, run_id, *rest = self._args
        name = f"{self._name}-w{w}-g{self._generation}"
        return self._cls.options(name=name, **self._options).remote(out_dir, f"{run_id}-w{w:03d}", *rest)

    def replace(self, w: int, dead) -> None:
        if self.actors[w] is dead:
            logger.warning("episode worker %d died; starting a new one", w)
            self.actors[w] = self._spawn(w)

    def flush(self) -> None:
        import ray
        from ray.exceptions import RayActorError

        for w, actor in enumerate(self.actors):
            try:
                ray.get(actor.flush.remote())
            except RayActorError:
                self.replace(w, actor)

    def kill(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)


def _one_pass(pending, pool: _WorkerPool, per_worker: int, bar, scores: _Running, stop: StopFlag) -> None:
    """Run ``pending`` on the pool, at most ``per_worker`` episodes in flight per worker; returns early once
    ``stop`` is set (the episodes still in flight are left to the caller)."""
    import ray
    from ray.exceptions import RayActorError

    queue = deque(pending)
    in_flight: dict[Any, tuple[int, Any]] = {}
    load = [0] * len(pool.actors)
    errors = 0
    while (queue or in_flight) and not stop.signum:
        while queue and len(in_flight) < per_worker * len(pool.actors):
            w = min(range(len(load)), key=load.__getitem__)
            index, item = queue.popleft()
            actor = pool.actors[w]
            in_flight[actor.run.remote(index, item)] = (w, actor)
            load[w] += 1
        ready, _ = ray.wait(list(in_flight), num_returns=min(len(in_flight), 64), timeout=0.5)
        for ref in ready:
            w, actor = in_flight.pop(ref)
            load[w] -= 1
            try:
                summary = ray.get(ref)
            except RayActorError:  # the episode is found missing after the pass and run again
                pool.replace(w, actor)
                continue
            errors += summary["status"] == "error"
            bar.update(1)
            bar.set_postfix_str(f"{scores.add(summary)} | errors={errors}", refresh=False)
