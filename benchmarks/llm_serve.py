"""Ray Serve LLM against vLLM's own OpenAI server: the same engine side by side in one run (issue 22 item 5).

Both servers (``llm_servers.py``: ``sws serve --llm`` and ``python -m vllm.entrypoints.openai.api_server``)
run one ``LLMServeConfig``: by default the tiny random-weight Qwen3 (``tiny_qwen3.py``) on vLLM's CPU engine,
eager; ``--model PATH`` for another local Hugging Face folder. Each is started alone (start-up: process start
until ``/v1/models`` lists the model), then both stay up and the rounds alternate between them (ray first in
odd rounds, direct first in even ones) so the machine's load drifts over both alike; each side's turn starts
with a few unmeasured requests (after idling, its first ones were up to 4x slower). Per round, side and
concurrency (``--concurrency``, 1 and 8 requests in flight), ``--waves`` x concurrency requests of each kind:

- prefill: a prompt of ~``--prompt-tokens`` tokens, unique from its first tokens (no prefix-cache hit), 1
  output token: prompt tokens per second;
- decode: a short prompt, ``--decode-tokens`` output tokens (``ignore_eos``), answered whole (as the agent
  asks): output tokens per second (the short prefill included);
- ttft: the prefill's prompt, streamed: the time to the first token (median over the requests). Ray Serve
  LLM sends streamed tokens in batches every 50 ms (``RAYLLM_MODEL_RESPONSE_BATCH_TIMEOUT_MS``), so its first
  token waits for the first batch.

Each figure is the median over ``--repeats`` rounds. Ratios are ray / direct for throughput and direct / ray
for times (above 1: Ray Serve LLM is faster). Goal: ray >= 0.9x direct in prefill and decode tokens/s at
every concurrency; time to first token and start-up (which on the ray side includes starting Ray and the
retrieval app) are reported without one. JSON lines on stdout; exits 1 when a goal fails.

Run: ``timeout 2400 nice .venv/bin/python benchmarks/llm_serve.py --quick``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from llm_servers import SIDES, Server, start
from serve_common import WORK, emit, json_stdout, sample_index

from sws.config import LLMServeConfig

GOAL = 0.9  # ray / direct tokens per second
BENCH = "llm_serve"


def _burst(concurrency: int, requests: int, one: Callable[[int], Any]) -> tuple[list[Any], float]:
    """``one(i)`` for ``requests`` values of ``i``, ``concurrency`` at a time; their results and the seconds."""
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        done = list(pool.map(one, range(requests)))
    return done, time.perf_counter() - started


def prefill(client: Any, model: str, tag: str, concurrency: int, requests: int, tokens: int) -> dict:
    """Prompt tokens per second of 1-token completions of ~``tokens``-token prompts."""

    def one(i: int) -> int:
        content = (
            f"{tag}-{i} " + "hello " * tokens
        )  # " hello" is one token in Qwen's and Llama's vocabularies
        reply = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": content}], max_completion_tokens=1
        )
        return reply.usage.prompt_tokens

    done, seconds = _burst(concurrency, requests, one)
    return {"tokens": sum(done), "seconds": seconds, "tokens_per_s": sum(done) / seconds}


def decode(client: Any, model: str, tag: str, concurrency: int, requests: int, tokens: int) -> dict:
    """Output tokens per second of ``tokens``-token completions (``ignore_eos``) of a short prompt, answered
    whole as the agent asks for them (the short prefill included)."""

    def one(i: int) -> int:
        reply = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"{tag}-{i} Count to ten."}],
            max_completion_tokens=tokens,
            extra_body={"ignore_eos": True},
        )
        return reply.usage.completion_tokens

    done, seconds = _burst(concurrency, requests, one)
    return {"tokens": sum(done), "seconds": seconds, "tokens_per_s": sum(done) / seconds}


def first_token(client: Any, model: str, tag: str, concurrency: int, requests: int, tokens: int) -> dict:
    """Median seconds from sending a streamed request (a ~``tokens``-token prompt) to its first token."""

    def one(i: int) -> float:
        sent = time.perf_counter()
        stream = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"{tag}-{i} " + "hello " * tokens}],
            max_completion_tokens=4,
            stream=True,
            extra_body={"ignore_eos": True},
        )
        first = None
        for chunk in stream:
            if first is None and chunk.choices and _text(chunk.choices[0].delta):
                first = time.perf_counter() - sent
        if first is None:
            raise RuntimeError(f"{model}: a streamed answer without text")
        return first

    done, _ = _burst(concurrency, requests, one)
    return {"ttft_s": statistics.median(done)}


def _text(delta: Any) -> str:
    """What a streamed delta says: its content or (vLLM's reasoning parsers) reasoning."""
    extra = delta.model_extra or {}
    return delta.content or extra.get("reasoning") or extra.get("reasoning_content") or ""


def measure(servers: dict[str, Server], args: argparse.Namespace) -> dict[tuple[str, str, int], list[dict]]:
    """Every round's figures per ``(side, measurement, concurrency)``."""
    from openai import OpenAI

    clients = {
        s: OpenAI(base_url=v.url, api_key="EMPTY", timeout=600, max_retries=0) for s, v in servers.items()
    }
    rounds: dict[tuple[str, str, int], list[dict]] = {}
    for r in range(args.repeats):
        for side in SIDES if r % 2 == 0 else SIDES[::-1]:
            client, model = clients[side], servers[side].model
            # warm-up: the first requests after the other side's turn were up to 4x slower on either side
            decode(client, model, f"warm-r{r}-{side}", 2, 4, 8)
            first_token(client, model, f"warm-r{r}-{side}", 2, 2, 8)
            for c in args.concurrency:
                tag, n = f"r{r}-{side}-c{c}", c * args.waves
                rounds.setdefault((side, "prefill", c), []).append(
                    prefill(client, model, f"p-{tag}", c, n, args.prompt_tokens)
                )
                rounds.setdefault((side, "decode", c), []).append(
                    decode(client, model, f"d-{tag}", c, n, args.decode_tokens)
                )
                rounds.setdefault((side, "ttft", c), []).append(
                    first_token(client, model, f"t-{tag}", c, n, args.prompt_tokens)
                )
    return rounds


def report(servers: dict[str, Server], rounds: dict[tuple[str, str, int], list[dict]], args) -> bool:
    """Emit the per-side figures and the ratios; True when every goal passes."""
    medians: dict[tuple[str, str, int], dict[str, float]] = {}
    for (side, measurement, c), figures in rounds.items():
        keys = [k for k in ("tokens_per_s", "ttft_s") if k in figures[0]]
        medians[side, measurement, c] = {k: statistics.median(f[k] for f in figures) for k in keys}
        emit(
            BENCH,
            measurement,
            side=side,
            clients=c,
            **{k: round(v, 4) for k, v in medians[side, measurement, c].items()},
            rounds=[{k: round(v, 4) for k, v in f.items()} for f in figures],
            model=servers[side].model,
        )
    passed = True
    for measurement, c in sorted({(m, c) for _, m, c in rounds}):
        ray, direct = medians["ray", measurement, c], medians["direct", measurement, c]
        if measurement == "ttft":
            ratio, goal = direct["ttft_s"] / ray["ttft_s"], None
        else:
            ratio, goal = ray["tokens_per_s"] / direct["tokens_per_s"], GOAL
            passed &= ratio >= GOAL
        emit(BENCH, f"{measurement}_ray_over_direct", clients=c, ratio=round(ratio, 3), goal=goal)
    startup = {side: round(s.startup_s, 1) for side, s in servers.items()}
    emit(BENCH, "startup", ratio=round(startup["direct"] / startup["ray"], 3), goal=None, seconds=startup)
    engines = {side: s.engine_processes() for side, s in servers.items()}
    emit(
        BENCH,
        "summary",
        goals={"tokens_per_s_ray_over_direct": GOAL},
        passed=passed,
        engines=engines,
        args={k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    )
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", type=Path, help="a local Hugging Face model folder (default: the tiny Qwen3)"
    )
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--prompt-tokens", type=int, default=1024)
    parser.add_argument("--decode-tokens", type=int, default=128)
    parser.add_argument("--concurrency", type=lambda s: [int(c) for c in s.split(",")], default=[1, 8])
    parser.add_argument("--waves", type=int, default=3, help="requests per round = waves x concurrency")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per side (alternating)")
    parser.add_argument(
        "--quick", action="store_true", help="512-token prompts, 32-token outputs, 4 waves, 5 rounds"
    )
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args()
    if args.quick:
        args.prompt_tokens, args.decode_tokens, args.waves, args.repeats = 512, 32, 4, 5
    json_stdout()
    model = args.model or _tiny_model(args.work)
    cfg = LLMServeConfig(
        model=str(model.resolve()),
        device="cpu",
        max_model_len=args.max_model_len,
        cpu_kv_cache_gib=1,
        enforce_eager=True,
        max_num_seqs=max(8, *args.concurrency),
    )
    index = sample_index(args.work)
    servers, stoppers = {}, []
    try:
        for side in SIDES:  # one at a time: each start-up alone on the machine
            server, stop = start(side, cfg, args.work, index)
            servers[side] = server
            stoppers.append(stop)
        passed = report(servers, measure(servers, args), args)
    finally:
        for stop in stoppers:
            stop()
    return 0 if passed else 1


def _tiny_model(work: Path) -> Path:
    from tiny_qwen3 import make_tiny_qwen3

    out = work / "tiny-qwen3"
    return out if (out / "config.json").is_file() else make_tiny_qwen3(out)


if __name__ == "__main__":
    raise SystemExit(main())
