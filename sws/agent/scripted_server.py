"""A scripted OpenAI-compatible chat-completions server over real HTTP, for tests, benchmarks and demos.

``POST /v1/chat/completions`` answers with the OpenAI wire format (tool calls, finish reason, usage) from a
policy in :mod:`sws.agent.policies`, picked by the request's ``model`` when it names one, else the server's
default. Faults (5xx, 429 with or without ``Retry-After``, hangs past the client timeout, added latency) are
injected at configured rates; every answer can also trickle out a byte at a time (:func:`drip`), or be
something other than a chat completion (``MALFORMED``); a prompt over ``Faults.max_model_len`` estimated
tokens gets vLLM's 400 (:func:`context_overflow_body`). Requests can be recorded for inspection. Run it in a
background thread (:class:`ScriptedLLMServer`) or as a command:
``python -m sws.agent.scripted_server --policy heuristic --port 8000``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

import click
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.requests import ClientDisconnect

from sws.agent.policies import HEURISTIC_MODEL, POLICIES, Policy, Reply, Turn, scripted

# What a misconfigured endpoint answers with 200 instead of a chat completion: (media type, body).
MALFORMED = {
    "html": ("text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "sse": ("text/event-stream", 'data: {"choices": [{"delta": {"content": "Paris"}}]}\n\ndata: [DONE]\n\n'),
    "no_choices": ("application/json", json.dumps({"id": "x", "object": "chat.completion", "choices": []})),
    "bad_json": ("application/json", '{"id": "x", "object": "chat.completion", "choices": [{'),
}


@dataclass(frozen=True, slots=True)
class Faults:
    """Injected failures: each request draws once and fails with 5xx, hangs or gets 429 at these rates.

    Args:
        error_rate: share of requests answered 500/502/503 (in turn).
        timeout_rate: share that sleep ``hang_s`` before answering (past a client's timeout).
        rate_limit_rate: share answered 429.
        latency_s: added to every answer.
        hang_s: how long a hang lasts.
        seed: seed of the draw.
        retry_after_s: a 429 carries ``Retry-After`` with this many seconds, and any request that comes sooner
            is answered 429 again and counted in ``stats["early"]``.
        drip_s: every answer is sent a byte at a time, this many seconds apart (the headers at once).
        malformed: a key of ``MALFORMED``: what a 200 carries instead of the chat completion.
        max_model_len: the context of the model played: a prompt of more (estimated) tokens is answered 400 with
            vLLM's body, before any other fault; None: no limit.
    """

    error_rate: float = 0.0
    timeout_rate: float = 0.0
    rate_limit_rate: float = 0.0
    latency_s: float = 0.0
    hang_s: float = 30.0
    seed: int = 0
    retry_after_s: float | None = None
    drip_s: float = 0.0
    malformed: str | None = None
    max_model_len: int | None = None

    def __post_init__(self):
        if self.error_rate + self.timeout_rate + self.rate_limit_rate > 1:
            raise ValueError(f"fault rates add up to more than 1: {self}")
        if self.malformed is not None and self.malformed not in MALFORMED:
            raise ValueError(f"malformed={self.malformed!r}: expected one of {list(MALFORMED)}")


class ScriptedLLM:
    """The request handler: policy choice, faults, wire format and the request log.

    Args:
        policy: default policy name (a key of ``POLICIES``).
        script: steps of a ``scripted`` policy; when given it is the default policy.
        faults: injected failures.
        record_requests: keep every request body in :attr:`requests`.
        reasoning_content: add a ``reasoning_content`` field to replies (as SGLang's reasoning parser does).
    """

    def __init__(
        self,
        policy: str = "search_then_submit",
        script: list[dict[str, Any]] | None = None,
        faults: Faults | None = None,
        record_requests: bool = True,
        reasoning_content: bool = False,
    ):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
        self.policy_name = "scripted" if script else policy
        self.default_policy: Policy = scripted(script) if script else POLICIES[policy]
        self.faults = faults or Faults()
        self.record_requests = record_requests
        self.reasoning_content = reasoning_content
        self.requests: list[dict[str, Any]] = []
        self.stats: dict[str, int] = {
            "requests": 0,
            "errors": 0,
            "hangs": 0,
            "rate_limited": 0,
            "early": 0,
            "context_overflows": 0,
            "max_in_flight": 0,
        }
        self._in_flight = 0
        self._not_before = 0.0  # monotonic time before which a request is early (after a Retry-After)
        self._rng = random.Random(self.faults.seed)
        self._ids = itertools.count()

    async def handle(self, body: dict[str, Any]) -> Response:
        """Answer one request (faults first); counts requests and the most in flight at once."""
        self.stats["requests"] += 1
        if self.record_requests:
            self.requests.append(body)
        self._in_flight += 1
        self.stats["max_in_flight"] = max(self.stats["max_in_flight"], self._in_flight)
        try:
            return drip(await self._answer(body), self.faults.drip_s)
        finally:
            self._in_flight -= 1

    async def _answer(self, body: dict[str, Any]) -> Response:
        f = self.faults
        prompt_tokens = estimated_prompt_tokens(body.get("messages") or [])
        if f.max_model_len is not None and prompt_tokens > f.max_model_len:
            self.stats["context_overflows"] += 1
            return JSONResponse(context_overflow_body(f.max_model_len, prompt_tokens), status_code=400)
        if time.monotonic() < self._not_before:
            self.stats["early"] += 1
            return self._rate_limited()
        draw = self._rng.random()
        if f.latency_s:
            await asyncio.sleep(f.latency_s)
        if draw < f.error_rate:
            self.stats["errors"] += 1
            status = (500, 502, 503)[self.stats["errors"] % 3]
            return JSONResponse(
                {"error": {"message": "injected fault", "type": "server_error"}}, status_code=status
            )
        if draw < f.error_rate + f.timeout_rate:
            self.stats["hangs"] += 1
            await asyncio.sleep(f.hang_s)
        elif draw < f.error_rate + f.timeout_rate + f.rate_limit_rate:
            self.stats["rate_limited"] += 1
            return self._rate_limited()
        if f.malformed:
            media_type, text = MALFORMED[f.malformed]
            return Response(text, media_type=media_type)
        return JSONResponse(self.completion(body))

    def _rate_limited(self) -> Response:
        headers = {}
        if self.faults.retry_after_s is not None:
            headers["retry-after"] = f"{self.faults.retry_after_s:g}"
            self._not_before = time.monotonic() + self.faults.retry_after_s
        body = {"error": {"message": "injected rate limit", "type": "rate_limit"}}
        return JSONResponse(body, status_code=429, headers=headers)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object for a request."""
        model = str(body.get("model", ""))
        policy = (
            POLICIES["heuristic"] if model == HEURISTIC_MODEL else POLICIES.get(model, self.default_policy)
        )
        if policy is POLICIES["heuristic"]:
            model = HEURISTIC_MODEL
        turn = Turn(list(body.get("messages") or []), body.get("seed"))
        reply = policy(turn)
        n = next(self._ids)
        message = _message(reply, f"{turn.seed if turn.seed is not None else 'n'}_{n}")
        if self.reasoning_content:
            message["reasoning_content"] = f"scripted reasoning for round {turn.round}"
        prompt_tokens = estimated_prompt_tokens(turn.messages)
        completion_tokens = (
            len(reply.content or "") + sum(len(a) + len(nm) for nm, a in reply.tool_calls)
        ) // 4 + 1
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": f"sws-scripted-{self.policy_name}",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def estimated_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The prompt's tokens as the scripted server counts them: a quarter of the messages' characters, plus 1."""
    return sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1


def context_overflow_body(max_model_len: int, prompt_tokens: int) -> dict[str, Any]:
    """vLLM 0.32's answer (HTTP 400) to a prompt longer than the context: ``VLLMValidationError`` of
    ``vllm/renderers/params.py`` (``_token_len_check``) as ``create_error_response`` sends it."""
    message = (
        f"This model's maximum context length is {max_model_len} tokens. However, your prompt contains "
        f"{prompt_tokens} input tokens, which exceeds this limit even without any output tokens. Please reduce "
        f"the length of the input prompt. (parameter=input_tokens, value={prompt_tokens})"
    )
    return {"error": {"message": message, "type": "BadRequestError", "param": "input_tokens", "code": 400}}


def _message(reply: Reply, call_prefix: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{call_prefix}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
    return message


def drip(response: Response, seconds: float) -> Response:
    """``response`` with its status and headers at once, then its body a byte at a time, ``seconds`` apart
    (unchanged when ``seconds`` is 0): a server that answers but never finishes within a client's timeout."""
    if not seconds:
        return response

    async def trickle():
        for i in range(len(response.body)):
            yield response.body[i : i + 1]
            await asyncio.sleep(seconds)

    return StreamingResponse(trickle(), response.status_code, dict(response.headers))


def create_app(llm: ScriptedLLM) -> FastAPI:
    """The FastAPI app serving ``llm``."""
    app = FastAPI(title="sws scripted LLM", docs_url=None, redoc_url=None)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        try:
            body = await request.json()
        except ClientDisconnect:  # the client gave up (a timeout, a killed run)
            return Response(status_code=499)
        return await llm.handle(body)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        names = [*POLICIES, HEURISTIC_MODEL]
        return {
            "object": "list",
            "data": [{"id": n, "object": "model", "owned_by": "sws-scripted"} for n in names],
        }

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


class ScriptedLLMServer:
    """Serves a :class:`ScriptedLLM` on 127.0.0.1 (a free port unless given) from a background thread.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. Keyword arguments go to
    :class:`ScriptedLLM`; :attr:`requests` is its request log.
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1", **llm_kwargs: Any):
        self.llm = ScriptedLLM(**llm_kwargs)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host, self.port = self._socket.getsockname()[:2]
        config = uvicorn.Config(
            create_app(self.llm),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            backlog=4096,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.llm.requests

    def start(self, timeout: float = 10.0) -> Self:
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"scripted LLM server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--policy", type=click.Choice(list(POLICIES)), default="heuristic", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True, help="0 picks a free port.")
@click.option(
    "--error-rate", type=float, default=0.0, show_default=True, help="Share of requests answered 5xx."
)
@click.option(
    "--timeout-rate", type=float, default=0.0, show_default=True, help="Share of requests that hang."
)
@click.option("--rate-limit-rate", type=float, default=0.0, show_default=True, help="Share answered 429.")
@click.option(
    "--latency",
    "latency_s",
    type=float,
    default=0.0,
    show_default=True,
    help="Seconds added to every answer.",
)
@click.option("--hang", "hang_s", type=float, default=30.0, show_default=True, help="Seconds a hang lasts.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the fault draws.")
@click.option("--retry-after", "retry_after_s", type=float, help="Retry-After of a 429, in seconds.")
@click.option(
    "--drip", "drip_s", type=float, default=0.0, show_default=True, help="Seconds between an answer's bytes."
)
@click.option("--malformed", type=click.Choice(list(MALFORMED)), help="Answer this instead of a completion.")
@click.option("--max-model-len", type=int, help="Answer vLLM's 400 to prompts of more (estimated) tokens.")
def main(policy, host, port, **faults) -> None:
    """Serve a scripted OpenAI-compatible LLM (no model weights; the heuristic policy is a no-LLM baseline)."""
    faults = Faults(**faults)
    server = ScriptedLLMServer(port=port, host=host, policy=policy, faults=faults, record_requests=False)
    server.start()
    click.echo(f"scripted LLM ({policy}) at {server.url}  (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
