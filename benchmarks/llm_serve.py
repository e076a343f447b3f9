"""Ray Serve LLM against vLLM's own OpenAI server: the same engine side by side in one run, and episodes per
hour of ``sws eval`` on it (issue 22 item 5).

Both servers (``llm_servers.py``: ``sws serve --llm`` and ``python -m vllm.entrypoints.openai.api_server``)
run one ``LLMServeConfig`` on vLLM's CPU engine: by default (``--model smollm2``) SmolLM2-135M-Instruct, the
folder ``sws fetch model smollm2`` makes (``sws.fetch.fetch_model``), with the smollm2 profile's ``llm:``
section; ``--model tiny`` the tiny random-weight Qwen3 (``tiny_qwen3.py``) and ``--model PATH`` another local
Hugging Face folder, eager, 1 GiB of KV cache. Each is started alone (start-up: process start until
``/v1/models`` lists the model), then both stay up and the rounds alternate between them (ray first in
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
retrieval app) are reported without one.

Then the direct server stops and ``sws eval`` runs episodes on the ray side, as a user runs them: on the
service's Ray, the LLM at ``/llm/v1``, the tools of the same ``sws serve`` (served with the smollm2 profile's
observation budget), the smollm2 profile's agent settings (``tool_choice: required``, 8 rounds), no judge;
at each ``--episode-concurrency`` (episodes in flight on one worker, 1 and 8) over the first
max(``--episodes``, concurrency) bundled Bamboogle questions: episodes per hour (of the harness's own time,
worker start included) and the outcome counts, without a goal. JSON lines on stdout; exits 1 when a goal fails.

Run: ``timeout 1800 nice .venv/bin/python benchmarks/llm_serve.py --quick``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from llm_servers import SIDES, Server, start
from serve_common import REPO, WORK, emit, json_stdout, sample_index
from served_eval import eval_command

from sws.config import LLMServeConfig

GOAL = 0.9  # ray / direct tokens per second
BENCH = "llm_serve"
PROFILE = "smollm2"  # the served tools' observation budget, the episodes' agent settings, SmolLM2's llm:
EVAL_TIMEOUT_S = 3600.0  # one `sws eval` run; a hang guard


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


def episodes(server: Server, work: Path, concurrency: int, questions: int) -> dict[str, Any]:
    """``sws eval`` of the first ``questions`` Bamboogle questions on ``server`` (the ray side), ``concurrency``
    episodes in flight on one worker, with the smollm2 profile's agent settings and no judge; its figures.

    Raises:
        RuntimeError: ``sws eval`` failed.
    """
    from sws.eval.results import load_table

    out = work / "llm-episodes" / f"c{concurrency}"
    shutil.rmtree(out, ignore_errors=True)  # a new run: one left there would be resumed
    overrides = ["-c", PROFILE, "eval.workers=1", f"eval.episodes_per_worker={concurrency}"]
    overrides += [f"eval.max_concurrency={concurrency}", "eval.judge=false"]
    command = eval_command(sys.executable, server.ready, out, questions, *overrides)
    env = {**os.environ, "RAY_ADDRESS": server.ready["ray_address"]}  # episodes on the service's Ray
    env.setdefault("RAY_AUTH_MODE", "disabled")
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=EVAL_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"sws eval exited {done.returncode}: {' '.join(command)}\n{done.stderr[-3000:]}")
    rows = load_table(out, ["status", "rounds", "total_tokens"]).to_pylist()
    return episode_figures(json.loads(done.stdout), rows, time.perf_counter() - started)


def episode_figures(summary: dict[str, Any], rows: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """Episodes per hour of ``sws eval``'s summary (its own time: the workers' start and every episode it
    ran) and what its recorded ``rows`` came to.

    Raises:
        ValueError: the run recorded no episode.
    """
    if not summary["ran"] or not rows:
        raise ValueError(f"sws eval recorded no episode: {summary}")
    return {
        "episodes": summary["ran"],
        "episodes_per_hour": round(summary["ran"] / summary["elapsed_s"] * 3600, 1),
        "outcomes": dict(sorted(Counter(r["status"] for r in rows).items())),
        "seconds": round(summary["elapsed_s"], 1),
        "wall_s": round(wall_s, 1),  # the whole command: its start, its Ray, the data, the episodes
        "rounds_mean": round(statistics.mean(r["rounds"] for r in rows), 2),
        "tokens_per_episode": round(statistics.mean(r["total_tokens"] or 0 for r in rows)),
        "f1": round(summary["f1"], 4),
    }


def report(
    servers: dict[str, Server],
    rounds: dict[tuple[str, str, int], list[dict]],
    engines: dict[str, list[dict]],
    runs: dict[int, dict[str, Any]],
    args: argparse.Namespace,
) -> bool:
    """Emit the per-side figures, the ratios and the episodes; True when every goal passes."""
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
    for c, figures in runs.items():
        emit(BENCH, "episodes", side="ray", clients=c, **figures, model=servers["ray"].model)
    emit(
        BENCH,
        "summary",
        goals={"tokens_per_s_ray_over_direct": GOAL},
        passed=passed,
        engines=engines,
        args={k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    )
    return passed


def served_config(args: argparse.Namespace) -> LLMServeConfig:
    """What both sides serve (``--model``: the module's docstring), with a sequence slot per request in flight.

    Raises:
        ValueError: ``--model`` is none of ``smollm2``, ``tiny`` or a Hugging Face model folder.
    """
    slots = max(*args.concurrency, *args.episode_concurrency)
    if args.model == "smollm2":
        from serve.llm import load_llm_source
        from sws.fetch import fetch_model

        cfg = load_llm_source(PROFILE)
        cfg = replace(cfg, model=fetch_model("smollm2")["out"], max_num_seqs=max(cfg.max_num_seqs, slots))
        return replace(cfg, max_model_len=args.max_model_len) if args.max_model_len else cfg
    model = _tiny_model(args.work) if args.model == "tiny" else Path(args.model)
    if not (model / "config.json").is_file():
        raise ValueError(
            f"--model {args.model}: not smollm2, tiny or a Hugging Face model folder (no config.json)"
        )
    return LLMServeConfig(
        model=str(model.resolve()),
        device="cpu",
        max_model_len=args.max_model_len or 4096,
        cpu_kv_cache_gib=1,
        enforce_eager=True,
        max_num_seqs=max(8, slots),
    )


def _counts(text: str) -> list[int]:
    return [int(c) for c in text.split(",")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default="smollm2", help="smollm2 (default), tiny (the tiny Qwen3) or a local model folder"
    )
    parser.add_argument(
        "--max-model-len", type=int, help="the engine's context (default: the profile's; 4096 otherwise)"
    )
    parser.add_argument("--prompt-tokens", type=int, default=1024)
    parser.add_argument("--decode-tokens", type=int, default=128)
    parser.add_argument("--concurrency", type=_counts, default=[1, 8])
    parser.add_argument("--waves", type=int, default=3, help="requests per round = waves x concurrency")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per side (alternating)")
    parser.add_argument(
        "--episodes", type=int, default=8, help="Bamboogle questions per episode concurrency (0: no episodes)"
    )
    parser.add_argument("--episode-concurrency", type=_counts, default=[1, 8], help="episodes in flight")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="512-token prompts, 32-token outputs, 1 wave, 3 rounds, 2 episodes",
    )
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args()
    if args.quick:
        args.prompt_tokens, args.decode_tokens, args.waves, args.repeats, args.episodes = 512, 32, 1, 3, 2
    json_stdout()  # before the fetch, whose converter may print
    try:
        cfg = served_config(args)
    except ValueError as exc:
        parser.error(str(exc))
    index = sample_index(args.work)
    servers, stoppers = {}, {}
    try:
        for side in SIDES:  # one at a time: each start-up alone on the machine
            servers[side], stoppers[side] = start(side, cfg, args.work, index, ("-c", PROFILE))
        rounds = measure(servers, args)
        engines = {side: s.engine_processes() for side, s in servers.items()}
        stoppers.pop("direct")()  # the episodes have the machine to the ray side
        runs = {
            c: episodes(servers["ray"], args.work, c, max(args.episodes, c))
            for c in (args.episode_concurrency if args.episodes else [])
        }
        passed = report(servers, rounds, engines, runs, args)
    finally:
        for stop in stoppers.values():
            stop()
    return 0 if passed else 1


def _tiny_model(work: Path) -> Path:
    from tiny_qwen3 import make_tiny_qwen3

    out = work / "tiny-qwen3"
    return out if (out / "config.json").is_file() else make_tiny_qwen3(out)


if __name__ == "__main__":
    raise SystemExit(main())
