"""Shared helpers of the ``benchmarks/index_*.py`` and ``search_*.py`` scripts (not a benchmark itself).

Data: real English Wikipedia lead sections (WikiChat head/tail/recent topics) and real queries
(search-benchmark-game AOL queries, HotpotQA/MuSiQue/Bamboogle questions) from ``tests/data``
(copies of ``../shared/data``, so a fresh clone runs; override with ``SWS_BENCH_DATA``). A corpus of any size is made by recombining real sentences: page p
takes lead ``p mod L`` and its chunks mix in sentences of other leads. Its vectors are the MiniLM vectors
of the main lead and the first lead it mixes in, 0.7/0.3, with a little noise, so the dense index sees a
realistic embedding space without embedding 100k chunks on a laptop CPU.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from corpus_common import MACHINE, REPO, emit, json_stdout  # also puts the repository on sys.path

from sws.corpus.schema import CHUNKS, REDIRECTS
from sws.index.embedders import Embedder

DATA = Path(os.environ.get("SWS_BENCH_DATA", REPO / "tests" / "data"))
LEAD_FILES = (
    "wikichat_head_articles_en.json",
    "wikichat_tail_articles_en.json",
    "wikichat_recent_articles_en.json",
)
__all__ = ["MACHINE", "REPO", "emit", "json_stdout"]


def load_leads(limit: int | None = None) -> list[tuple[str, str]]:
    leads: dict[str, str] = {}
    for name in LEAD_FILES:
        leads.update(json.loads((DATA / "bench" / name).read_text()))
    items = [(t, x) for t, x in leads.items() if len(x) > 80]
    return items[:limit] if limit else items


def load_queries() -> dict[str, list[str]]:
    """``aol``: the 962 search-benchmark-game queries; ``questions``: multi-hop QA questions."""
    aol = [
        json.loads(line)["query"] for line in (DATA / "bench" / "search-benchmark-game_queries.jsonl").open()
    ]
    questions = [
        q["question"]
        for q in json.loads((DATA / "qa" / "hotpotqa_test_questions_and_answers.json").read_text())[:500]
    ]
    questions += [
        q["question"]
        for q in json.loads((DATA / "qa" / "musique_test_questions_and_answers.json").read_text())[:300]
    ]
    questions += [
        json.loads(line)["question"] for line in (DATA / "qa" / "bamboogle_test.flashrag.jsonl").open()
    ]
    return {"aol": aol, "questions": questions}


def synthetic_rows(
    leads: list[tuple[str, str]], n_chunks: int, chunk_bytes: int = 6300, seed: int = 0
) -> Iterator[tuple[dict, tuple[int, int]]]:
    """``n_chunks`` chunk rows (1-3 per page) of about ``chunk_bytes`` of text each, one at a time, each with
    its (main lead, first mixed-in lead)."""
    rng = random.Random(seed)
    sentences = [re.split(r"(?<=[.!?])\s+", text.strip()) for _, text in leads]
    made, page = 0, 0
    while made < n_chunks:
        a = page % len(leads)
        title = leads[a][0] if page < len(leads) else f"{leads[a][0]} ({page // len(leads)})"
        n = min(rng.choice((1, 1, 2, 3)), n_chunks - made)
        for i in range(n):
            b = rng.randrange(len(leads))
            body, size, other = list(sentences[a]), len(leads[a][1]), b
            while size < chunk_bytes:
                extra = rng.sample(sentences[other], min(len(sentences[other]), 4))
                body += extra
                size += sum(len(x) + 1 for x in extra)
                other = rng.randrange(len(leads))
            text = f"Section {i}: {'Preamble' if i == 0 else 'Part ' + str(i)}\n" + " ".join(body)
            row = {
                "chunk_id": f"{page + 1}_{i}",
                "page_id": page + 1,
                "title": title,
                "chunk_index": i,
                "n_chunks": n,
                "section": text.split("\n", 1)[0],
                "text": text,
                "n_tokens": len(text.split()),
            }
            yield row, (a, b)
        made += n
        page += 1


def synthetic_corpus(
    root: Path,
    leads: list[tuple[str, str]],
    n_chunks: int,
    chunk_bytes: int = 6300,
    seed: int = 0,
    part_rows: int = 20_000,
) -> np.ndarray:
    """Write a corpus of ``n_chunks`` chunks (``synthetic_rows``; 6300 bytes is a 1536-token chunk) one part
    of ``part_rows`` at a time, never the whole corpus in memory; returns each chunk's (main lead, first
    mixed-in lead) as an (n, 2) array."""
    for name in ("chunks", "redirects"):
        (root / name).mkdir(parents=True, exist_ok=True)
    mix, rows = np.zeros((n_chunks, 2), np.int32), []
    for k, (row, pair) in enumerate(synthetic_rows(leads, n_chunks, chunk_bytes, seed)):
        rows.append(row)
        mix[k] = pair
        if len(rows) == part_rows or k == n_chunks - 1:
            part = root / "chunks" / f"part-{k // part_rows:05d}.parquet"
            pq.write_table(pa.Table.from_pylist(rows, schema=CHUNKS), part)
            rows = []
    pq.write_table(pa.Table.from_pylist([], schema=REDIRECTS), root / "redirects" / "part-00000.parquet")
    fingerprint = f"bench-{n_chunks}-{chunk_bytes}-{seed}"
    (root / "manifest.json").write_text(json.dumps({"kind": "sws-corpus", "fingerprint": fingerprint}))
    return mix


def mixed_vectors(lead_vectors: np.ndarray, mix: list[tuple[int, int]], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = np.array(mix).T
    out = (
        0.7 * lead_vectors[a] + 0.3 * lead_vectors[b] + rng.normal(0, 0.02, (len(mix), lead_vectors.shape[1]))
    )
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


class LookupEmbedder(Embedder):
    """Documents -> precomputed vectors by text, in the space of the embedder it stands for (same fingerprint)."""

    kind = "bench-lookup"

    def __init__(self, stands_for: Embedder, texts: list[str], vectors: np.ndarray):
        super().__init__(stands_for.model, stands_for.query_task)
        self._dim, self._rows = stands_for.dim, {t: i for i, t in enumerate(texts)}
        self._vectors = vectors

    @property
    def dim(self) -> int:
        return self._dim

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._vectors[[self._rows[t] for t in texts]]


def chunk_texts(corpus_dir: Path) -> list[str]:
    from sws.index import CorpusFiles

    return [t for b in CorpusFiles.open(corpus_dir).iter_chunks(["text"]) for t in b.column(0).to_pylist()]


def minilm():
    from sws.index import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(device="cpu")


def prepare(
    work: Path, n_chunks: int, n_leads: int, embedder: Embedder, chunk_bytes: int = 6300
) -> tuple[Path, np.ndarray]:
    """The synthetic corpus of ``n_chunks`` and its vectors (cached under ``work``)."""
    corpus = work / f"corpus-{n_chunks}-{n_leads}-{chunk_bytes}"
    vectors_file = work / f"vectors-{n_chunks}-{n_leads}-{chunk_bytes}.npy"
    if not vectors_file.is_file():
        leads = load_leads(n_leads)
        lead_file = work / f"leads-{n_leads}.npy"
        if not lead_file.is_file():
            work.mkdir(parents=True, exist_ok=True)
            np.save(lead_file, embedder.embed_documents([text for _, text in leads]))
        mix = synthetic_corpus(corpus, leads, n_chunks, chunk_bytes)
        np.save(vectors_file, mixed_vectors(np.load(lead_file), mix))
    return corpus, np.load(vectors_file)


def build_bench_index(
    work: Path, corpus: Path, vectors: np.ndarray, embedder: Embedder, name: str, **faiss_params
):
    """``build_index`` over the synthetic corpus with its precomputed vectors; returns (index dir, manifest)."""
    from sws.index import FaissIndexer, build_index

    out = work / name
    lookup = LookupEmbedder(embedder, chunk_texts(corpus), vectors)
    manifest = build_index(
        corpus,
        out,
        embedder=lookup,
        dense=FaissIndexer(**faiss_params),
        embed_options={"workers": 0, "rows_per_unit": 50_000, "dtype": "float16"},
    )
    return out, manifest


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "mean_ms": round(float(ms.mean()), 3),
    }
