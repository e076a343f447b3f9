"""SQuAD-style answer metrics with aliases, exactly as CONTRACT.md §7.2.

Every metric takes the prediction and the candidate golds (gold first, then aliases) and maximises over them.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_BOOL_ANSWERS = {"yes", "no", "noanswer"}


class F1Score(NamedTuple):
    f1: float
    precision: float
    recall: float


def normalize_answer(s: object) -> str:
    """Lowercase, drop ASCII punctuation, replace the words a/an/the by a space, collapse whitespace."""
    text = "".join(ch for ch in str(s).lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, candidates: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals a normalised candidate."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(c) for c in candidates))


def substring_match(prediction: str, candidates: Sequence[str]) -> float:
    """1.0 if a raw candidate, its ``lower()`` or its ``capitalize()`` is a raw substring of the prediction."""
    pred = str(prediction)
    return float(any(v in pred for c in candidates for v in (str(c), str(c).lower(), str(c).capitalize())))


def cover_match(prediction: str, candidates: Sequence[str]) -> float:
    """1.0 if a normalised candidate is a substring of the normalised prediction (cover-EM)."""
    pred = normalize_answer(prediction)
    return float(any(normalize_answer(c) in pred for c in candidates))


def token_f1(prediction: str, gold: str) -> F1Score:
    """Token F1 of one prediction against one gold on normalised whitespace tokens (multiset overlap)."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        score = float(pred_tokens == gold_tokens)
        return F1Score(score, score, score)
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return F1Score(0.0, 0.0, 0.0)
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return F1Score(2 * precision * recall / (precision + recall), precision, recall)


def f1_score(prediction: str, candidates: Sequence[str]) -> F1Score:
    """Best token F1 over the candidates; precision/recall of the first candidate reaching it."""
    best = F1Score(0.0, 0.0, 0.0)
    for c in candidates:
        score = token_f1(prediction, c)
        if score.f1 > best.f1:
            best = score
    return best


def f1_bool(prediction: str, candidates: Sequence[str]) -> float:
    """F1 with the yes/no case: when either side normalises to yes/no/noanswer, a candidate scores equality."""
    pred = normalize_answer(prediction)
    best = 0.0
    for c in candidates:
        gold = normalize_answer(c)
        if pred in _BOOL_ANSWERS or gold in _BOOL_ANSWERS:
            score = float(pred == gold)
        else:
            score = token_f1(prediction, c).f1
        best = max(best, score)
    return best


def score_answer(prediction: str, candidates: Sequence[str]) -> dict[str, float]:
    """The record's ``eval`` block (without ``gpt_judge``): em, em_substring, em_cover, f1, precision, recall, f1_bool."""
    f1 = f1_score(prediction, candidates)
    return {
        "em": exact_match(prediction, candidates),
        "em_substring": substring_match(prediction, candidates),
        "em_cover": cover_match(prediction, candidates),
        "f1": f1.f1,
        "precision": f1.precision,
        "recall": f1.recall,
        "f1_bool": f1_bool(prediction, candidates),
    }


NO_JUDGE = "n/a (no judge)"  # shown instead of a judge score when no episode has a verdict


def judge_accuracy(verdicts: Iterable[int | None], n: int) -> float | None:
    """LLM-judge accuracy over ``n`` items (an item without a verdict counts 0); None when no verdict was
    recorded at all: no judge ran, and a 0 would read as a measured score."""
    verdicts = [v for v in verdicts if v is not None]
    if not verdicts:
        return None
    return sum(verdicts) / n if n else 0.0
