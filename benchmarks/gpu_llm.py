"""The actor LLM of the GPU check: the ``device: gpu`` settings that ``sws serve --llm`` serves, and a probe of
the served OpenAI endpoint.

    python benchmarks/gpu_llm.py config tiny --model-dir MODEL_DIR --out tiny.yaml
    python benchmarks/gpu_llm.py config paper [--model-dir DIR] --out paper.yaml
    python benchmarks/gpu_llm.py probe http://127.0.0.1:8000/llm/v1 tiny-qwen3

``config`` writes the ``LLMServeConfig`` fields (JSON, which is YAML) and prints one JSON line
``{"settings": ..., "yaml": ...}``: ``tiny`` the tiny Qwen3 of ``tiny_qwen3.py``; ``paper`` the paper
profile's ``llm:`` section on local weights only (the GPU machine has no model hub): ``--model-dir``, else the
model's snapshot in the local Hugging Face cache (``HF_HUB_OFFLINE=1``). Without them it writes nothing and
prints ``{"skipped": why}``. ``probe`` prints its figures as one JSON line: one chat completion with the tools
(latency, finish reason, which fields came back), then a burst of concurrent fixed-length completions
(generated tokens/s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python benchmarks/gpu_llm.py` without installing
    sys.path.insert(0, str(REPO))

KINDS = ("tiny", "paper")
WEIGHTS = ("*.safetensors", "*.bin")  # what a folder of Hugging Face weights holds


def tiny_settings(model_dir: str | Path) -> dict[str, Any]:
    """``LLMServeConfig`` fields for the tiny model on one GPU: the parsers come from its family and chat
    template (plain Qwen3's JSON tool calls: ``hermes`` / ``qwen3``), a context that fits an episode's 20
    rounds, a small share of the GPU's memory, and eager mode (no graph capture: a faster start for a 2-layer
    model)."""
    return {
        "model": str(Path(model_dir).resolve()),
        "device": "gpu",
        "max_model_len": 32_768,
        "dtype": "bfloat16",
        "gpu_memory_utilization": 0.2,
        "max_num_seqs": 32,
        "max_ongoing_requests": 64,
        "replicas": {"min_replicas": 1, "max_replicas": 1},
        "enforce_eager": True,
    }


def paper_settings(model_dir: str | None) -> dict[str, Any]:
    """The paper profile's ``llm:`` section (device gpu) on its model's local weights (:func:`local_weights`),
    served under the model's name, eager (no graph capture: a start within the check's minutes).

    Raises:
        LookupError: no local weights.
    """
    from dataclasses import asdict

    from serve.llm import served_name
    from sws.config import load_config

    cfg = load_config("paper").llm
    weights = local_weights(cfg.model, model_dir)
    return {
        **asdict(cfg),
        "model": str(weights.resolve()),
        "served_model_name": served_name(cfg),
        "device": "gpu",
        "enforce_eager": True,
    }


def local_weights(model_id: str, model_dir: str | None) -> Path:
    """``model_dir``, else ``model_id``'s snapshot in the local Hugging Face cache; never a download.

    Raises:
        LookupError: no weights there, saying where it looked.
    """
    if model_dir:
        where, path = f"--model-dir {model_dir}", Path(model_dir)
    else:
        from huggingface_hub import constants, snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        where = f"the local Hugging Face cache ({constants.HF_HUB_CACHE}) and no --model-dir given"
        try:
            path = Path(snapshot_download(model_id, local_files_only=True))
        except LocalEntryNotFoundError:
            raise LookupError(f"no local weights of {model_id}: not in {where}") from None
    if not (path / "config.json").is_file() or not any(any(path.glob(p)) for p in WEIGHTS):
        raise LookupError(f"no local weights of {model_id} in {where}: no config.json and weight files")
    return path


def write_config(kind: str, out: Path, model_dir: str | None) -> dict[str, Any]:
    """Write ``kind``'s settings to ``out``, validated through ``LLMServeConfig`` and the app config (as
    ``sws serve --llm`` reads them); ``{"settings", "yaml"}``, or ``{"skipped": why}`` without weights."""
    from serve.llm import llm_config, load_llm_source

    if kind == "tiny":
        if not model_dir:
            raise ValueError("config tiny needs --model-dir (benchmarks/tiny_qwen3.py's folder)")
        settings = tiny_settings(model_dir)
    else:
        try:
            settings = paper_settings(model_dir)
        except LookupError as exc:
            return {"skipped": str(exc)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(settings, indent=1) + "\n")
    llm_config(load_llm_source(str(out)))
    return {"settings": settings, "yaml": str(out)}


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
    config = commands.add_parser("config", help="write the served settings (device gpu); one JSON line")
    config.add_argument("kind", choices=KINDS)
    config.add_argument("--out", type=Path, required=True, help="the YAML file to write")
    config.add_argument("--model-dir", help="the model's local folder (paper: default the local HF cache)")
    check = commands.add_parser("probe", help="measure the endpoint; one JSON line")
    check.add_argument("base_url")
    check.add_argument("model")
    args = parser.parse_args()
    if args.command == "config":
        try:
            print(json.dumps(write_config(args.kind, args.out, args.model_dir)))
        except ValueError as exc:
            parser.error(str(exc))
    else:
        print(json.dumps(probe(args.base_url, args.model)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
