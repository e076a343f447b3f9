"""Scoring one prediction: the metrics of §7.2 and, when a judge is given, its verdict (§7.3)."""

from __future__ import annotations

from sws.eval.datasets import QAItem
from sws.eval.judge import LLMJudge
from sws.eval.metrics import score_answer


async def score_prediction(item: QAItem, prediction: str, judge: LLMJudge | None = None) -> dict[str, float]:
    """The record's ``eval`` block; ``gpt_judge`` is present only when the judge gave a verdict."""
    scores: dict[str, float] = score_answer(prediction, item.candidates)
    if judge is not None:
        result = await judge.judge(item.question, item.answer, item.aliases, prediction)
        if result.verdict is not None:
            scores["gpt_judge"] = result.verdict
    return scores
