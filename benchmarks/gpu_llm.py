"""The actor LLM of the GPU check: the Ray Serve LLM (vLLM) app for the tiny Qwen3 model
(``benchmarks/tiny_qwen3.py``), served on a local Ray, and a probe of its OpenAI endpoint.

    python benchmarks/gpu_llm.py config MODEL_DIR               # the app's LLMServeConfig args (no vLLM needed)
    python benchmarks/gpu_llm.py serve MODEL_DIR --port 8000     # blocks until SIGTERM/SIGINT
    python benchmarks/gpu_llm.py probe http://127.0.0.1:8000/v1 tiny-qwen3

``serve`` prints one line ``{"event": "ready", "url", "model", "ray_address", "startup_s"}`` once
``/v1/models`` answers; episodes can then join that Ray with ``RAY_ADDRESS``. ``probe`` prints its figures
as one JSON line: one chat completion with the tools (latency, finish reason, which fields came back), then a
burst of concurrent fixed-length completions (generated tokens/s).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python benchmarks/gpu_llm.py` without installing
    sys.path.insert(0, str(REPO))


def app_args(model_dir: str | Path) -> dict[str, Any]:
    """``LLMServeConfig`` fields for the tiny model on one GPU: the parsers come from its family and chat
    template (plain Qwen3's JSON tool calls: ``hermes`` / ``qwen3``), a context that fits an episode's 20
    rounds, a small share of the GPU's memory, and eager mode (no graph capture: a faster start for a 2-layer
    model)."""
    return {
        "model": str(Path(model_dir).resolve()),
        "max_model_len": 32_768,
        "dtype": "bfloat16",
        "gpu_memory_utilization": 0.2,
        "max_num_seqs": 32,
        "max_ongoing_requests": 64,
        "replicas": {"min_replicas": 1, "max_replicas": 1},
        "enforce_eager": True,
        "app_name": "llm",
        "route_prefix": "/",
    }


def serve_forever(model_dir: str, port: int, num_cpus: int | None, timeout_s: float) -> None:
    """Start a local Ray, run the app at ``http://127.0.0.1:{port}/v1``, print the ready line, block until
    SIGINT/SIGTERM, then shut Serve and Ray down."""
    import ray
    from ray import serve

    from serve.llm import build_app, load_llm_config, served_name
    from sws.raykit import init_ray

    started = time.monotonic()
    args = app_args(model_dir)
    app = build_app(args)
    init_ray(None, num_cpus)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # after ray.init, which installs its own SIGTERM handler
        signal.signal(sig, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(app, name=args["app_name"], route_prefix=args["route_prefix"], blocking=False)
        url, model = f"http://127.0.0.1:{port}/v1", served_name(load_llm_config(args))
        _wait_for_model(url, model, timeout_s - (time.monotonic() - started))
        ready = {"url": url, "model": model, "ray_address": ray.get_runtime_context().gcs_address}
        print(
            json.dumps({"event": "ready", **ready, "startup_s": round(time.monotonic() - started, 1)}),
            flush=True,
        )
        while not stop.wait(0.5):
            pass
    finally:
        serve.shutdown()
        ray.shutdown()


def _wait_for_model(url: str, model: str, timeout_s: float) -> None:
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
                if model in [m["id"] for m in json.load(response)["data"]]:
                    return
                last = f"{model} not listed"
        except (OSError, ValueError, KeyError) as exc:
            last = exc
        time.sleep(1.0)
    raise TimeoutError(f"{url}/models did not list {model} within {timeout_s:.0f} s (last: {last})")


def probe(base_url: str, model: str, burst: int = 16, burst_tokens: int = 256) -> dict[str, Any]:
    """Figures of the endpoint: one tool-enabled chat turn, then ``burst`` concurrent completions of exactly
    ``burst_tokens`` tokens (``ignore_eos``)."""
    from openai import OpenAI

    from sws.env import tool_schemas

    client = OpenAI(base_url=base_url, api_key="EMPTY", timeout=120, max_retries=0)
    listed = {m.id: getattr(m, "max_model_len", None) for m in client.models.list().data}
    messages = [{"role": "user", "content": "Who directed the film Actrius? Search Wikipedia."}]
    t0 = time.perf_counter()
    turn = client.chat.completions.create(
        model=model,
        messages=messages,
        tools=tool_schemas(),
        tool_choice="auto",
        max_completion_tokens=64,
        seed=0,
    )
    latency = time.perf_counter() - t0
    message = turn.choices[0].message.model_dump()

    def fixed_length(i: int) -> int:
        reply = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"Count to {i}."}],
            max_completion_tokens=burst_tokens,
            seed=i,
            extra_body={"ignore_eos": True},
        )
        return reply.usage.completion_tokens

    t0 = time.perf_counter()
    with ThreadPoolExecutor(burst) as pool:
        tokens = sum(pool.map(fixed_length, range(burst)))
    seconds = time.perf_counter() - t0
    return {
        "models": listed,
        "tool_turn": {
            "latency_s": round(latency, 3),
            "finish_reason": turn.choices[0].finish_reason,
            "prompt_tokens": turn.usage.prompt_tokens,
            "completion_tokens": turn.usage.completion_tokens,
            "fields": sorted(k for k, v in message.items() if v),
            "tool_calls": len(message.get("tool_calls") or []),
        },
        "burst": {
            "requests": burst,
            "completion_tokens": tokens,
            "seconds": round(seconds, 2),
            "tokens_per_s": round(tokens / seconds),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    config = commands.add_parser("config", help="print the app's LLMServeConfig args as JSON")
    config.add_argument("model_dir")
    run = commands.add_parser("serve", help="serve the app on a local Ray until SIGTERM/SIGINT")
    run.add_argument("model_dir")
    run.add_argument("--port", type=int, default=8000)
    run.add_argument("--num-cpus", type=int, default=None)
    run.add_argument("--timeout-s", type=float, default=300.0, help="give up if not serving by then")
    check = commands.add_parser("probe", help="measure the endpoint; one JSON line")
    check.add_argument("base_url")
    check.add_argument("model")
    args = parser.parse_args()
    if args.command == "config":
        print(json.dumps(app_args(args.model_dir)))
    elif args.command == "serve":
        serve_forever(args.model_dir, args.port, args.num_cpus, args.timeout_s)
    else:
        print(json.dumps(probe(args.base_url, args.model)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
