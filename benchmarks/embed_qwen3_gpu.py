"""Qwen3-Embedding-0.6B throughput on a GPU: tokens/s of ``Qwen3Embedder`` on 1536-token chunks, next to the
GPU's measured bf16 matmul rate (the ceiling), in the same run.

The model is the 0.6B architecture (28 layers, hidden 1024, 16/8 heads, 151k vocabulary) with randomly
initialised weights and the real Qwen3 tokenizer (``tests/data/qwen3_tokenizer.json``): speed does not depend
on weight values, and no weights can be downloaded. Chunks are windows of 1535 tokens (+ EOS) of the bundled
sample dump's wikitext, decoded back to text, so the embedder tokenises them again as it would a corpus.

- ``matmul``: bf16 ``torch.matmul`` of 8192 x 8192 matrices, TFLOP/s (the achievable ceiling).
- ``embed``: ``Qwen3Embedder.embed_documents`` (bf16, SDPA, length-sorted batches of at most
  ``--max-batch-tokens``) over ``--chunks`` chunks after one warm-up batch: tokens/s, chunks/s, and the model
  FLOP rate (2 x parameters x tokens + attention) as a share of the matmul rate (``mfu``).

Run on a GPU: ``python benchmarks/embed_qwen3_gpu.py`` (~1 min on an H100). Without one it exits 2 with a
message; ``--device cpu --tiny`` runs the same path on a 2-layer model as a smoke check.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from corpus_common import emit, json_stdout

TOKENIZER = REPO / "tests" / "data" / "qwen3_tokenizer.json"
QWEN3_06B = {  # Qwen/Qwen3-Embedding-0.6B config.json
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 32768,
    "rope_theta": 1_000_000,
    "tie_word_embeddings": True,
}


def random_qwen3(out: Path, tiny: bool) -> Path:
    """A randomly initialised Qwen3 model directory with the real tokenizer; returns ``out``."""
    import torch
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(TOKENIZER), eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    tokenizer.save_pretrained(out)
    shape = QWEN3_06B | (
        {"num_hidden_layers": 2, "hidden_size": 256, "intermediate_size": 512} if tiny else {}
    )
    torch.manual_seed(0)
    Qwen3Model(Qwen3Config(vocab_size=len(tokenizer), **shape)).to(torch.bfloat16).save_pretrained(out)
    return out


def sample_chunks(n: int, tokens: int) -> list[str]:
    """``n`` texts of ``tokens`` Qwen3 tokens cut from the bundled sample's wikitext (repeated as needed)."""
    from tokenizers import Tokenizer

    from sws.config import bundled_sample_dump
    from sws.corpus.dump import DumpUnit, WikiDumpReader

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    ids: list[int] = []
    for page in WikiDumpReader(DumpUnit(bundled_sample_dump())).pages():
        ids.extend(tokenizer.encode(page.text).ids)
    windows = [ids[i : i + tokens] for i in range(0, len(ids) - tokens, tokens)]
    return [tokenizer.decode(windows[i % len(windows)]) for i in range(n)]


def matmul_tflops(device: str, size: int = 8192, repeats: int = 20) -> float:
    import torch

    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    torch.matmul(a, b)
    _sync(device)
    started = time.perf_counter()
    for _ in range(repeats):
        torch.matmul(a, b)
    _sync(device)
    return 2 * size**3 * repeats / (time.perf_counter() - started) / 1e12


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def model_flops(config, tokens: int, seq: int) -> float:
    """Forward FLOPs: 2 per parameter per token (embeddings excluded) plus attention scores and values."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    heads, kv, head_dim = config.num_attention_heads, config.num_key_value_heads, config.head_dim
    per_layer = hidden * head_dim * (2 * heads + 2 * kv) + 3 * hidden * config.intermediate_size
    attention = 2 * 2 * heads * head_dim * seq * layers  # QK^T and AV per token, causal halves ignored
    return tokens * (2 * per_layer * layers + attention)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--chunks", type=int, default=2048)
    parser.add_argument("--chunk-tokens", type=int, default=1535, help="tokens per chunk before EOS")
    parser.add_argument("--max-batch-tokens", type=int, default=131072, help="the paper profile's value")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model (smoke check)")
    args = parser.parse_args()
    json_stdout()
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("embed_qwen3_gpu: needs a CUDA GPU (or --device cpu --tiny for a smoke check)", file=sys.stderr)
        return 2
    from sws.index.embedders import Qwen3Embedder

    gpu = torch.cuda.get_device_name() if args.device.startswith("cuda") else None
    ceiling = matmul_tflops(args.device, size=8192 if gpu else 1024, repeats=20 if gpu else 3)
    emit("embed_qwen3_gpu", "matmul", device=args.device, gpu=gpu, bf16_tflops=round(ceiling, 1))

    texts = sample_chunks(args.chunks, args.chunk_tokens)
    with tempfile.TemporaryDirectory() as tmp:
        embedder = Qwen3Embedder(
            str(random_qwen3(Path(tmp), args.tiny)),
            device=args.device,
            max_length=args.chunk_tokens + 1 + 64,
            batch_size=args.batch_size,
            max_batch_tokens=args.max_batch_tokens,
        )
        if not gpu:  # the embedder keeps float32 on CPU
            embedder._model.float()
        tokens = sum(len(row) for row in embedder.token_ids(texts))
        embedder.embed_documents(texts[: min(len(texts), args.batch_size)])  # warm-up (kernels, allocator)
        _sync(args.device)
        started = time.perf_counter()
        vectors = embedder.embed_documents(texts)
        _sync(args.device)
        seconds = time.perf_counter() - started
        achieved = model_flops(embedder._model.config, tokens, args.chunk_tokens + 1) / seconds / 1e12
    emit(
        "embed_qwen3_gpu",
        "embed",
        device=args.device,
        gpu=gpu,
        tiny=args.tiny,
        chunks=len(texts),
        tokens=tokens,
        dim=int(vectors.shape[1]),
        seconds=round(seconds, 2),
        tokens_per_s=round(tokens / seconds),
        chunks_per_s=round(len(texts) / seconds, 1),
        model_tflops=round(achieved, 1),
        bf16_matmul_tflops=round(ceiling, 1),
        mfu=round(achieved / ceiling, 3),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
