"""The episode record: CONTRACT.md §6.10 plus counts, latencies, errors and the run's identity.

:meth:`EpisodeRecord.to_json` gives the reference's ``{qid}.json`` object exactly; :meth:`to_row` gives a flat
row for Parquet (history and schemas as JSON strings, ``eval`` as columns) matching :data:`RECORD_SCHEMA`;
:func:`rows_table` makes a table of such rows, never failing for one bad row, and :func:`schema_problem` says
why a Parquet file's schema is not :data:`RECORD_SCHEMA`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa

from sws.agent import AgentConfig, Episode
from sws.env import get_tool
from sws.eval.datasets import QAItem

logger = logging.getLogger(__name__)

EVAL_KEYS = ("em", "em_substring", "em_cover", "f1", "precision", "recall", "f1_bool")
_SURROGATES = re.compile(r"[\ud800-\udfff]")

RECORD_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("dataset", pa.string()),
        ("type", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("answer_aliases", pa.list_(pa.string())),
        ("model", pa.string()),
        ("messages", pa.string()),
        ("tools", pa.string()),
        ("predicted_answer", pa.string()),
        ("stop_reason", pa.string()),
        ("time_cost", pa.float64()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("total_tokens", pa.int64()),
        *((key, pa.float64()) for key in EVAL_KEYS),
        ("gpt_judge", pa.int8()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("error", pa.string()),
        ("index", pa.int64()),
        ("seed", pa.int64()),
        ("rounds", pa.int64()),
        ("search_calls", pa.int64()),
        ("open_calls", pa.int64()),
        ("submit_calls", pa.int64()),
        ("unknown_tool_calls", pa.int64()),
        ("tool_errors", pa.int64()),
        ("dropped_tool_calls", pa.int64()),
        ("nudges", pa.int64()),
        ("llm_time_s", pa.float64()),
        ("tool_time_s", pa.float64()),
        ("llm_retries", pa.int64()),
        ("fingerprint", pa.string()),
        ("agent_config", pa.string()),
    ]
)


@dataclass(slots=True)
class EpisodeRecord:
    """One finished (or failed) episode of one item.

    ``eval`` is None until scored (and for failed episodes); ``status`` is ``submitted``, ``max_rounds``,
    ``context_exhausted`` (scored: no answer) or ``error``. ``fingerprint`` identifies the environment (index + tools) the episode ran against.
    ``unknown_tool_calls`` counts calls of names no tool is registered under (``sws.env.register_tool``).
    """

    id: str
    dataset: str
    type: str
    question: str
    answer: str
    answer_aliases: list[str]
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    predicted_answer: str
    stop_reason: str | None
    time_cost: float
    usage: dict[str, int]
    eval: dict[str, float] | None
    status: str
    error_type: str | None
    error: str | None
    index: int
    seed: int
    rounds: int
    search_calls: int
    open_calls: int
    submit_calls: int
    unknown_tool_calls: int
    tool_errors: int
    dropped_tool_calls: int
    nudges: int
    llm_time_s: float
    tool_time_s: float
    llm_retries: int
    fingerprint: str
    agent_config: dict[str, Any]

    @classmethod
    def from_episode(
        cls,
        item: QAItem,
        index: int,
        episode: Episode,
        config: AgentConfig,
        tools: list[dict[str, Any]],
        fingerprint: str,
        eval: dict[str, float] | None = None,
    ) -> EpisodeRecord:
        calls = episode.tool_calls
        return cls(
            id=item.id,
            dataset=item.dataset,
            type=item.type,
            question=item.question,
            answer=item.answer,
            answer_aliases=list(item.aliases),
            model=config.model,
            messages=episode.messages,
            tools=tools,
            predicted_answer=episode.predicted_answer,
            stop_reason=episode.stop_reason,
            time_cost=episode.time_cost,
            usage=dict(episode.usage),
            eval=eval,
            status=episode.status,
            error_type=episode.error_type,
            error=episode.error,
            index=index,
            seed=episode.seed,
            rounds=episode.rounds,
            search_calls=calls["search"],
            open_calls=calls["open_url"],
            submit_calls=calls["submit_answer"],
            unknown_tool_calls=sum(n for name, n in calls.items() if get_tool(name) is None),
            tool_errors=episode.tool_errors,
            dropped_tool_calls=episode.dropped_tool_calls,
            nudges=episode.nudges,
            llm_time_s=episode.llm_time_s,
            tool_time_s=episode.tool_time_s,
            llm_retries=episode.llm_retries,
            fingerprint=fingerprint,
            agent_config=config.to_dict(),
        )

    def to_json(self) -> dict[str, Any]:
        """The reference's ``{qid}.json`` object (CONTRACT.md §6.10), keys in its order."""
        return {
            "id": self.id,
            "type": self.type,
            "question": self.question,
            "answer": self.answer,
            "answer_aliases": list(self.answer_aliases),
            "model": self.model,
            "messages": self.messages,
            "tools": self.tools,
            "predicted_answer": self.predicted_answer,
            "stop_reason": self.stop_reason,
            "time_cost": self.time_cost,
            "usage": dict(self.usage),
            "eval": self.eval,
        }

    def to_row(self) -> dict[str, Any]:
        """A flat row matching :data:`RECORD_SCHEMA`."""
        row: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        row["messages"] = json.dumps(self.messages, ensure_ascii=False)
        row["tools"] = json.dumps(self.tools, ensure_ascii=False)
        row["agent_config"] = json.dumps(self.agent_config, sort_keys=True)
        row.update(row.pop("usage"))
        scores = row.pop("eval") or {}
        row.update({key: scores.get(key) for key in (*EVAL_KEYS, "gpt_judge")})
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> EpisodeRecord:
        """The record back from a Parquet row."""
        row = dict(row)
        usage = {k: int(row.pop(k) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        scores = {k: row.pop(k) for k in (*EVAL_KEYS, "gpt_judge")}
        judge = scores.pop("gpt_judge")
        evaluation = (
            None
            if scores["f1"] is None
            else {**scores, **({"gpt_judge": int(judge)} if judge is not None else {})}
        )
        return cls(
            **{
                k: v
                for k, v in row.items()
                if k not in ("messages", "tools", "agent_config", "answer_aliases")
            },
            answer_aliases=list(row["answer_aliases"] or []),
            messages=json.loads(row["messages"]),
            tools=json.loads(row["tools"]),
            agent_config=json.loads(row["agent_config"]),
            usage=usage,
            eval=evaluation,
        )


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Record rows as a :data:`RECORD_SCHEMA` table. A row Arrow cannot convert (text that is not valid
    Unicode, such as a lone surrogate in a model's answer) becomes an ``error`` record saying why, with the
    values that do not convert repaired (surrogates replaced by U+FFFD) or left empty: one bad record never
    loses the others, and a resume runs it again."""
    try:
        return pa.Table.from_pylist(rows, schema=RECORD_SCHEMA)
    except (pa.ArrowException, ValueError):
        return pa.Table.from_pylist([_writable(row) for row in rows], schema=RECORD_SCHEMA)


def schema_problem(schema: pa.Schema) -> str | None:
    """Why a table of this schema holds no episode records (a column missing or of another type), or None.
    Columns of no record are ignored."""
    found = {field.name: field.type for field in schema}
    missing = [name for name in RECORD_SCHEMA.names if name not in found]
    if missing:
        return f"not a results part (no column {missing[0]})"
    return next(
        (
            f"column {field.name} is {found[field.name]}, not {field.type}"
            for field in RECORD_SCHEMA
            if found[field.name] != field.type
        ),
        None,
    )


def _writable(row: dict[str, Any]) -> dict[str, Any]:
    try:
        pa.Table.from_pylist([row], schema=RECORD_SCHEMA)
    except (pa.ArrowException, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        reason = f"the record could not be written: {type(exc).__name__}: {exc}"
        logger.warning("episode %r: %s; recorded as an error (a resume runs it again)", row.get("id"), reason)
        failed = row | dict.fromkeys((*EVAL_KEYS, "gpt_judge"))
        failed |= {"status": "error", "error_type": "RecordWriteError", "error": reason}
        return {field.name: _cell(failed.get(field.name), field.type) for field in RECORD_SCHEMA}
    return row


def _cell(value: Any, kind: pa.DataType) -> Any:
    """``value`` if Arrow converts it to ``kind``, else with lone surrogates replaced, else None."""
    for candidate in (value, _repaired(value)):
        try:
            pa.array([candidate], type=kind)
            return candidate
        except (pa.ArrowException, ValueError):
            pass
    return None


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    return [_repaired(v) for v in value] if isinstance(value, list) else value
