"""An episode as the UI shows it: steps, tool calls with their observations, and what the model saw of each.

History compression (``sws.agent.history.compress_history``) runs before every LLM call: all tool messages but
the last ``keep_recent_tool_results`` are cut to ``tool_result_max_chars`` characters. The stored history is
uncut, so for every observation :func:`history_marks` works out, from the positions of the assistant messages
(one per LLM call), in which rounds the model saw it whole and from which round on only its head.

Nothing here produces markup: text is split into :class:`Segment` s (plain text or a link to a playground view)
that the templates render with autoescaping on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from sws.config.agent import AgentConfig
from sws.env import get_tool, parse_wiki_url
from sws.eval.metrics import exact_match, token_f1
from sws.eval.records import EpisodeRecord

DEFAULT_KEEP_RECENT = AgentConfig().keep_recent_tool_results  # of records that do not say
DEFAULT_MAX_CHARS = AgentConfig().tool_result_max_chars
_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+")


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of text; ``href`` (a playground path, never content-controlled scheme) makes it a link."""

    text: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryMark:
    """What the model saw of one tool message.

    ``full_rounds``: rounds (1-based LLM calls) whose request held it whole; ``cut_rounds``: rounds that got
    only its first ``cut_at`` characters plus ``...[truncated N chars]``; both empty: no LLM call came after it.
    """

    full_rounds: tuple[int, ...]
    cut_rounds: tuple[int, ...]
    cut_at: int
    length: int

    @property
    def seen(self) -> bool:
        return bool(self.full_rounds or self.cut_rounds)

    @property
    def cut(self) -> bool:
        return bool(self.cut_rounds)

    @property
    def removed(self) -> int:
        return max(0, self.length - self.cut_at)


@dataclass(slots=True)
class Observation:
    name: str
    call_id: str | None
    content: str
    head: list[Segment]
    tail: list[Segment]
    mark: HistoryMark
    duration_s: float | None
    error: bool


@dataclass(slots=True)
class ToolCall:
    call_id: str | None
    name: str
    arguments: str
    pretty: str
    playground: str | None
    observation: Observation | None = None


@dataclass(slots=True)
class Step:
    """One item of the conversation: an assistant turn (with its calls) or a system / user message."""

    kind: str  # "system", "user", "assistant", "tool" (an observation with no matching call)
    round: int | None = None
    content: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    observation: Observation | None = None
    duration_s: float | None = None
    note: str = ""


@dataclass(slots=True)
class AnswerCheck:
    candidate: str
    is_gold: bool
    exact: bool
    f1: float


def history_marks(
    messages: list[dict[str, Any]], keep_recent: int = DEFAULT_KEEP_RECENT, max_chars: int = DEFAULT_MAX_CHARS
) -> dict[int, HistoryMark]:
    """For each tool message (by position), the rounds that saw it whole and those that saw it cut."""
    assistants = [j for j, m in enumerate(messages) if m.get("role") == "assistant"]
    tools = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    marks: dict[int, HistoryMark] = {}
    for i in tools:
        content = messages[i].get("content")
        length = len(content) if isinstance(content, str) else 0
        full: list[int] = []
        cut: list[int] = []
        for round_no, j in enumerate(assistants, 1):
            if j < i:
                continue
            newer = sum(1 for t in tools if i < t < j)  # tool messages after this one in that request
            (cut if newer >= keep_recent and length > max_chars else full).append(round_no)
        marks[i] = HistoryMark(tuple(full), tuple(cut), max_chars, length)
    return marks


def link_segments(text: str, href_for, start: int = 0, end: int | None = None) -> list[Segment]:
    """``text[start:end]`` as segments; Wikipedia URLs found in the whole text become playground links.

    ``href_for(url)`` returns the link target or None (then the URL stays plain text).
    """
    end = len(text) if end is None else end
    out: list[Segment] = []
    pos = start
    for match in _URL.finditer(text):
        a, b = max(match.start(), start), min(match.end(), end)
        if b <= a:
            continue
        href = href_for(match.group(0))
        if href is None:
            continue
        if a > pos:
            out.append(Segment(text[pos:a]))
        out.append(Segment(text[a:b], href))
        pos = b
    if pos < end:
        out.append(Segment(text[pos:end]))
    return out


def answer_checks(record: EpisodeRecord) -> list[AnswerCheck]:
    """The gold answer and each alias against the prediction (normalised exact match and token F1)."""
    pred = record.predicted_answer or ""
    candidates = [(record.answer, True)] + [(a, False) for a in record.answer_aliases if a != record.answer]
    return [
        AnswerCheck(c, gold, bool(exact_match(pred, [c])), token_f1(pred, c).f1 if pred else 0.0)
        for c, gold in candidates
    ]


def episode_steps(record: EpisodeRecord, root: str = "") -> list[Step]:
    """The conversation as steps, every tool observation attached to its call (by id, else in order)."""
    config = record.agent_config or {}
    keep = int(config.get("keep_recent_tool_results", DEFAULT_KEEP_RECENT) or DEFAULT_KEEP_RECENT)
    max_chars = int(config.get("tool_result_max_chars", DEFAULT_MAX_CHARS) or DEFAULT_MAX_CHARS)
    messages = [m if isinstance(m, dict) else {"role": "?", "content": str(m)} for m in record.messages]
    marks = history_marks(messages, keep, max_chars)

    def href_for(url: str) -> str | None:
        return open_href(root, url)

    steps: list[Step] = []
    pending: list[ToolCall] = []
    round_no = 0
    seen_user = False
    for i, msg in enumerate(messages):
        role = msg.get("role")
        content = _text(msg.get("content"))
        if role == "assistant":
            round_no += 1
            calls = [_tool_call(c, root) for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
            pending = list(calls)
            reasoning = _text(msg.get("reasoning_content") or msg.get("reasoning"))
            steps.append(
                Step(
                    "assistant",
                    round_no,
                    content,
                    reasoning,
                    calls,
                    duration_s=_number(msg.get("duration_s")),
                )
            )
        elif role == "tool":
            obs = _observation(msg, content, marks[i], href_for)
            call = next((c for c in pending if c.call_id and c.call_id == obs.call_id), None)
            call = call or next((c for c in pending if c.observation is None), None)
            if call is not None and call.observation is None:
                call.observation = obs
                pending = [c for c in pending if c is not call]
            else:
                steps.append(Step("tool", round_no or None, observation=obs))
        elif role == "system":
            steps.append(Step("system", content=content))
        else:
            note = "question" if not seen_user else ("nudge or round reminder" if round_no else "")
            seen_user = True
            steps.append(Step("user", round_no or None, content, note=note))
    return steps


def open_href(root: str, url: str) -> str | None:
    """The playground view of a Wikipedia URL the tools accept (http/https only), else None."""
    if not url.lower().startswith(("http://", "https://")) or parse_wiki_url(url) is None:
        return None
    return f"{root}/open?{urlencode({'url': url})}"


def search_href(root: str, args: dict[str, Any]) -> str:
    """The playground search for a model's ``search`` arguments (kept as given; the playground validates)."""
    params = {"q": _text(args.get("query"))}
    for key, name in (("method", "method"), ("top_k", "top_k")):
        if isinstance(args.get(key), str | int) and not isinstance(args.get(key), bool):
            params[name] = str(args[key])
    if args.get("only_title") not in (None, False, "false", "False", 0, "0", ""):
        params["only_title"] = "1"
    return f"{root}/search?{urlencode(params)}"


def _tool_call(call: dict[str, Any], root: str) -> ToolCall:
    fn = call.get("function") or {}
    name = _text(fn.get("name")).strip()
    raw = fn.get("arguments")
    raw = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    pretty = json.dumps(parsed, indent=2, ensure_ascii=False) if isinstance(parsed, dict) else raw
    playground = _playground(root, name, raw, parsed) if isinstance(parsed, dict) else None
    call_id = call.get("id")
    return ToolCall(str(call_id) if call_id is not None else None, name, raw, pretty, playground)


def _playground(root: str, name: str, raw: str, args: dict[str, Any]) -> str | None:
    """The playground view of a call: search and open_url have their own, any other registered tool that
    does not end the episode the call form."""
    if name == "search":
        return search_href(root, args) if args.get("query") else None
    if name == "open_url":
        return open_href(root, args["url"]) if isinstance(args.get("url"), str) else None
    tool = get_tool(name)
    if tool is None or tool.ends_episode:
        return None
    return f"{root}/call?{urlencode({'name': name, 'arguments': raw})}"


def _observation(msg: dict[str, Any], content: str, mark: HistoryMark, href_for) -> Observation:
    split = mark.cut_at if mark.cut else len(content)
    head = link_segments(content, href_for, 0, split)
    tail = link_segments(content, href_for, split) if mark.cut else []
    call_id = msg.get("tool_call_id")
    error = _json_status(content) == "error"
    return Observation(
        _text(msg.get("name")),
        str(call_id) if call_id is not None else None,
        content,
        head,
        tail,
        mark,
        _number(msg.get("duration_s")),
        error,
    )


def _json_status(content: str) -> str | None:
    if not content.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return str(value.get("status")) if isinstance(value, dict) else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return "\n".join(_text(p.get("text") if isinstance(p, dict) else p) for p in value)
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
