"""Scripted LLM policies: what the scripted server answers, derived from the request's messages alone.

A policy is stateless (the round is the number of assistant messages in the request), so any number of
episodes can share one server. :data:`POLICIES` holds the built-ins; ``heuristic`` is the no-LLM baseline
(search the question, open the top hit, submit a short answer pulled from the page by rules), always labelled
:data:`HEURISTIC_MODEL`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HEURISTIC_MODEL = "heuristic-baseline-no-llm"

_URL_RE = re.compile(r"\]\((\S+?)\)")
_TITLE_RE = re.compile(r"^\d+\. \[(.+?)\]\(", re.MULTILINE)
_YES_NO_RE = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE
)
_DATE_RE = re.compile(
    r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{3,4}\b"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{3,4}\b"
    r"|\b1\d{3}\b|\b20\d{2}\b"
)
_NUMBER_RE = re.compile(r"\b\d[\d,.]*\b")
_TOKEN_RE = re.compile(r"[\w'’-]+|[^\w\s]")
_CONNECTORS = {"of", "de", "da", "von", "van", "the", "al"}
_STOP_SPANS = {"Section", "Preamble", "The", "A", "An", "In", "It", "He", "She", "They", "This", "His", "Her"}


@dataclass(frozen=True, slots=True)
class Turn:
    """The request as a policy sees it."""

    messages: list[dict[str, Any]]
    seed: int | None

    @property
    def question(self) -> str:
        return next((str(m.get("content") or "") for m in self.messages if m.get("role") == "user"), "")

    @property
    def round(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    @property
    def last_tool(self) -> dict[str, Any] | None:
        """The last tool message, if it comes after the last assistant message."""
        for m in reversed(self.messages):
            if m.get("role") == "assistant":
                return None
            if m.get("role") == "tool":
                return m
        return None


@dataclass(frozen=True, slots=True)
class Reply:
    """An assistant message: text and/or tool calls (name, raw arguments string)."""

    content: str | None = None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)


Policy = Callable[[Turn], Reply]


def call(name: str, arguments: dict[str, Any] | str, content: str | None = None) -> Reply:
    """A reply with one tool call; a dict is JSON-encoded, a string is sent raw (for malformed arguments)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return Reply(content, [(name, raw)])


def submit(answer: str) -> Reply:
    return call("submit_answer", {"answer": answer})


def search_then_submit(turn: Turn) -> Reply:
    """Search the question, then submit the top hit's title."""
    if turn.round == 0:
        return call("search", {"query": turn.question}, "facts: none yet\nnext: search the question")
    titles = _TITLE_RE.findall(str((turn.last_tool or {}).get("content") or ""))
    return submit(titles[0] if titles else "")


def heuristic(turn: Turn) -> Reply:
    """The no-LLM baseline: search the question, open the top hit, submit a rule-extracted short answer."""
    last = turn.last_tool
    if turn.round == 0 or last is None:
        return call("search", {"query": turn.question})
    text = str(last.get("content") or "")
    if last.get("name") == "search":
        urls = _URL_RE.findall(text)
        return call("open_url", {"url": urls[0]}) if urls else submit("")
    return submit(heuristic_answer(turn.question, text))


# what ``search_methods`` adds to the question's search, one per round
_METHOD_SEARCHES: tuple[dict[str, Any], ...] = (
    {"method": "keywords", "top_k": 3},
    {"method": "vector", "top_k": 3},
    {"only_title": True, "top_k": 3},
)


def search_methods(turn: Turn) -> Reply:
    """Search the question by keywords, by vector and by title (top 3 each), open the first hit's URL, submit
    a rule-extracted short answer from that page (an empty one when no search found a URL)."""
    searches = len(_METHOD_SEARCHES)
    if turn.round < searches:
        return call("search", {"query": turn.question, **_METHOD_SEARCHES[turn.round]})
    if turn.round == searches:
        hits = (str(m.get("content") or "") for m in turn.messages if m.get("role") == "tool")
        urls = [url for text in hits for url in _URL_RE.findall(text)]
        return call("open_url", {"url": urls[0]}) if urls else submit("")
    return submit(heuristic_answer(turn.question, str((turn.last_tool or {}).get("content") or "")))


def heuristic_answer(question: str, page: str) -> str:
    """A short answer from page text by rules: yes for yes/no questions, a date, a number or a name span."""
    q = question.strip()
    if _YES_NO_RE.match(q):
        return "yes"
    lines = [ln for ln in page.splitlines() if ln.strip() and not ln.startswith("#")]
    body = "\n".join(lines)
    ql = q.lower()
    if re.search(r"\b(when|what year|which year|what date)\b", ql) and (m := _DATE_RE.search(body)):
        return m.group(0)
    if re.search(r"\bhow (many|much|old|long)\b", ql) and (m := _NUMBER_RE.search(body)):
        return m.group(0)
    q_words = set(re.findall(r"\w+", ql))
    spans = Counter(
        s
        for s in _name_spans(body)
        if s not in _STOP_SPANS and not set(re.findall(r"\w+", s.lower())) <= q_words
    )
    if spans:
        return spans.most_common(1)[0][0]
    titles = re.findall(r"^# (.+?)(?: \(.*\))?$", page, re.MULTILINE)
    return titles[0] if titles else ""


def _name_spans(text: str) -> list[str]:
    """Runs of capitalised words (any script), joined by a few lowercase connectors ("Duke of York")."""
    spans: list[str] = []
    run: list[str] = []
    for token in [*_TOKEN_RE.findall(text), "."]:
        if token[0].isupper() or (run and token in _CONNECTORS):
            run.append(token)
            continue
        while run and run[-1] in _CONNECTORS:
            run.pop()
        if run:
            spans.append(" ".join(run))
        run = []
    return spans


def no_tool_call(turn: Turn) -> Reply:
    """Never calls a tool: plain text on even rounds, empty content on odd rounds."""
    return Reply("The answer is probably unknown." if turn.round % 2 == 0 else None)


def too_many_calls(turn: Turn) -> Reply:
    """Seven parallel searches in the first step, then a submit."""
    if turn.round == 0:
        return Reply(
            "fanning out", [("search", json.dumps({"query": f"{turn.question} {i}"})) for i in range(7)]
        )
    return submit("done")


def malformed_arguments(turn: Turn) -> Reply:
    """A search whose arguments are not JSON, then a submit."""
    return call("search", '{"query": "unterminated', "oops") if turn.round == 0 else submit("done")


def unknown_tool(turn: Turn) -> Reply:
    """A call to a tool that does not exist, then a submit."""
    return call("browse", {"url": "https://example.com"}) if turn.round == 0 else submit("done")


def never_submit(turn: Turn) -> Reply:
    """Searches every round and never submits."""
    return call("search", {"query": f"{turn.question} (attempt {turn.round + 1})"})


def scripted(steps: list[dict[str, Any]]) -> Policy:
    """A policy replaying ``steps`` by round (the last step repeats).

    Each step is ``{"content": str | None, "tool_calls": [[name, arguments], ...]}`` with arguments a dict
    (JSON-encoded) or a raw string.
    """
    if not steps:
        raise ValueError("a scripted policy needs at least one step")

    def policy(turn: Turn) -> Reply:
        step = steps[min(turn.round, len(steps) - 1)]
        calls = [
            (name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
            for name, args in step.get("tool_calls") or []
        ]
        return Reply(step.get("content"), calls)

    return policy


POLICIES: dict[str, Policy] = {
    "search_then_submit": search_then_submit,
    "heuristic": heuristic,
    "search_methods": search_methods,
    "no_tool_call": no_tool_call,
    "too_many_calls": too_many_calls,
    "malformed_arguments": malformed_arguments,
    "unknown_tool": unknown_tool,
    "never_submit": never_submit,
}
