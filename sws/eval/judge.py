"""The LLM judge of CONTRACT.md §7.3: exact prompt, verdict parsing, and a disk cache of raw outputs.

Works against any OpenAI-compatible endpoint (``gpt-5.4-mini`` on api.openai.com by default, or an
open-weight judge on Ray Serve LLM). Deviation from the reference: the cache key includes
:data:`PROMPT_VERSION` (and the variant), so a prompt change never reuses stale verdicts.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import openai

from sws.agent.llm import LLMEndpoint, LLMSettings
from sws.cache import cache_dir
from sws.eval.metrics import exact_match
from sws.io import write_text_atomically

logger = logging.getLogger(__name__)

JUDGE_MODEL = "gpt-5.4-mini"
OPENAI_BASE_URL = "https://api.openai.com/v1"
JUDGE_SYSTEM_PROMPT = (
    "You are an expert QA evaluator. Judge factual correctness only; ignore style, grammar, and punctuation."
)
JUDGE_USER_TEMPLATE = (
    "Decide whether the prediction is factually correct.\n"
    "- Credit answers embedded in a longer response.\n"
    "- Treat equivalent dates, spellings, and name variants as correct.\n"
    "- Mark incorrect if it contradicts the golden answer or fails to answer.\n"
    "{note_block}\n"
    "Question: {question}\n"
    "{gold_block}\n"
    "Prediction: {prediction}\n"
    "\n"
    "Give one short sentence of reasoning, then write exactly True or False on the last line."
)
GOLD_LABEL = "Golden answer (any line below is acceptable):"
MAX_ALIASES = 30
PROMPT_VERSION = hashlib.sha256(
    f"{JUDGE_SYSTEM_PROMPT}\0{JUDGE_USER_TEMPLATE}\0{GOLD_LABEL}".encode()
).hexdigest()[:8]
Variant = Literal["repository", "paper"]

_TRUE_WORDS = {"true", "correct", "yes"}
_FALSE_WORDS = {"false", "incorrect", "wrong", "no"}
_VERDICT_RE = re.compile(r"\b(true|correct|yes)\b|\b(false|incorrect|wrong|no)\b", re.IGNORECASE)


def gold_block(gold: str, aliases: Sequence[str], variant: Variant = "repository") -> str:
    """The gold part of the prompt. Repository variant: the bare gold when there are no aliases."""
    aliases = [a for a in aliases if a and a.strip()][:MAX_ALIASES]
    if not aliases and variant == "repository":
        return str(gold)
    return "\n".join([GOLD_LABEL, str(gold), *(f"- {a}" for a in aliases)])


def judge_prompt(
    question: str, gold: str, aliases: Sequence[str], prediction: str, variant: Variant = "repository"
) -> str:
    """The exact user prompt sent to the judge."""
    return JUDGE_USER_TEMPLATE.format(
        note_block="",
        question=question.strip(),
        gold_block=gold_block(gold, aliases, variant),
        prediction=prediction.strip(),
    )


def parse_verdict(raw: str | None) -> int | None:
    """1 / 0 from the judge's output: last line's tokens from the right, else the last True/False word anywhere."""
    if raw is None or not raw.strip() or raw.startswith("Error:"):
        return None
    last_line = [line for line in raw.splitlines() if line.strip()][-1]
    for token in reversed(last_line.split()):
        word = token.strip(".,;:!?\"'").lower()
        if word in _TRUE_WORDS:
            return 1
        if word in _FALSE_WORDS:
            return 0
    matches = list(_VERDICT_RE.finditer(raw))
    if not matches:
        return None
    return 1 if matches[-1].group(1) else 0


def default_cache_dir() -> Path:
    """``llm_judge`` under the cache root (``sws.cache``)."""
    return cache_dir("llm_judge")


@dataclass(frozen=True, slots=True)
class JudgeResult:
    """``verdict`` is 1, 0 or None (API error, unparseable output); ``source``: em, empty, cache, api, skipped."""

    verdict: int | None
    raw: str | None
    source: str


def _check_variant(variant: str) -> None:
    if variant not in ("repository", "paper"):
        raise ValueError(f"judge variant must be 'repository' or 'paper', got {variant!r}")


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """:class:`LLMJudge`'s arguments, typed and checked when made (an evaluation sends them to its workers)."""

    model: str = JUDGE_MODEL
    base_url: str = OPENAI_BASE_URL
    api_key: str | None = None
    variant: Variant = "repository"
    cache_dir: str | None = None
    timeout: float = 60.0
    max_concurrency: int = 16
    max_attempts: int = 4

    def __post_init__(self) -> None:
        _check_variant(self.variant)
        LLMSettings(
            self.base_url, self.api_key, self.max_concurrency, self.timeout, self.max_attempts
        )  # its limits

    def judge(self) -> LLMJudge:
        return LLMJudge(**asdict(self))


class LLMJudge:
    """Scores predictions with an LLM, caching raw outputs on disk.

    Args:
        model: judge model name.
        base_url: OpenAI-compatible endpoint (``/v1`` is appended if missing).
        api_key: key; None reads ``OPENAI_API_KEY``.
        variant: ``"repository"`` (bare gold when no aliases, as the published numbers) or ``"paper"``.
        cache_dir: where raw outputs are kept; None means :func:`default_cache_dir`.
        timeout: seconds per request.
        max_concurrency: requests in flight at once.
        max_attempts: attempts per verdict on transient errors (jittered exponential backoff).
    """

    def __init__(
        self,
        model: str = JUDGE_MODEL,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        variant: Variant = "repository",
        cache_dir: str | Path | None = None,
        timeout: float = 60.0,
        max_concurrency: int = 16,
        max_attempts: int = 4,
    ):
        _check_variant(variant)
        self.model = model
        self.variant = variant
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._llm = LLMEndpoint(base_url, api_key, max_concurrency, timeout, max_attempts, backoff_s=1.0)

    def cache_path(self, question: str, gold: str, aliases: Sequence[str], prediction: str) -> Path:
        """``{model_key}-{variant}-{prompt_version}-{sample_id}-{pred_hash}.txt`` under the cache dir."""
        block = gold_block(gold, aliases, self.variant)
        sample_id = hashlib.sha256(f"{question}\0{block}".encode()).hexdigest()[:16]
        pred_hash = hashlib.sha256(prediction.encode()).hexdigest()[:12]
        model_key = re.sub(r"[^A-Za-z0-9_-]", "-", self.model)
        return self.cache_dir / f"{model_key}-{self.variant}-{PROMPT_VERSION}-{sample_id}-{pred_hash}.txt"

    async def judge(self, question: str, gold: str, aliases: Sequence[str], prediction: str) -> JudgeResult:
        """Verdict for one prediction: EM short-circuits to 1, an empty prediction is 0, else cache or API.

        An empty question is not judged (verdict None, source ``skipped``).
        """
        if not question.strip():
            return JudgeResult(None, None, "skipped")
        if exact_match(prediction, [gold, *aliases]) == 1.0:
            return JudgeResult(1, None, "em")
        if not prediction.strip():
            return JudgeResult(0, None, "empty")
        path = self.cache_path(question, gold, aliases, prediction)
        if path.is_file():
            raw = path.read_text(encoding="utf-8")
            return JudgeResult(parse_verdict(raw), raw, "cache")
        try:
            raw = await self._call(judge_prompt(question, gold, aliases, prediction, self.variant))
        except openai.OpenAIError as exc:  # after the retries
            logger.warning("judge call failed (not cached): %s: %s", type(exc).__name__, exc)
            return JudgeResult(None, None, "api")
        write_text_atomically(path, raw)
        return JudgeResult(parse_verdict(raw), raw, "api")

    async def _call(self, prompt: str) -> str:
        call = await self._llm.chat(
            {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
                    {"role": "user", "content": prompt},
                ],
                "temperature": 0,
                "max_completion_tokens": 256,
                "seed": 31415,
            }
        )
        return call.response.choices[0].message.content or ""

    async def close(self) -> None:
        await self._llm.close()
