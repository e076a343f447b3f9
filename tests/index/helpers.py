"""A small real-text corpus written straight to the corpus Parquet layout, and one index built from it.

The pages are lead sections of real English Wikipedia articles (``data/wikichat_leads.json``), split
into 1-3 chunks per page at sentence boundaries; each chunk starts with its ``Section ...`` line.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sws.corpus.schema import CHUNKS, DOCS, REDIRECTS
from sws.index.embedders import Embedder

LEADS = Path(__file__).parent / "data" / "wikichat_leads.json"
REDIRECT_ROWS = [  # (redirect title, target): one direct, one chain, one to a missing page, one other namespace
    ("KAT", "KickassTorrents", 0),
    ("BTC", "Bitcoin (cryptocurrency)", 0),
    ("Bitcoin (cryptocurrency)", "Bitcoin", 0),
    ("Nowhere land", "No such article", 0),
    ("Talk:Bitcoin", "Bitcoin", 1),
]


def lead_pages() -> list[dict]:
    """``{"page_id", "title", "chunks"}`` per page; page ids 1000, 1010, ... in file order."""
    pages = []
    for i, (title, lead) in enumerate(json.loads(LEADS.read_text()).items()):
        sentences = re.split(r"(?<=[.!?])\s+", lead.strip())
        n = 1 if len(sentences) < 3 else min(3, len(sentences) // 2)
        size = -(-len(sentences) // n)
        groups = [" ".join(sentences[j : j + size]) for j in range(0, len(sentences), size)]
        heads = ["Section 0: Preamble"] + [f"Section {k}: Part {k}" for k in range(1, len(groups))]
        pages.append(
            {"page_id": 1000 + 10 * i, "title": title, "chunks": [f"{h}\n{g}" for h, g in zip(heads, groups)]}
        )
    return pages


def write_corpus(
    root: Path, pages: list[dict], redirects=REDIRECT_ROWS, parts: int = 2, fingerprint: str = "leads-v1"
) -> Path:
    """Write ``chunks/``, ``docs/``, ``redirects/`` part files and ``manifest.json`` like the corpus build does."""
    chunk_rows = [
        {
            "chunk_id": f"{p['page_id']}_{i}",
            "page_id": p["page_id"],
            "title": p["title"],
            "chunk_index": i,
            "n_chunks": len(p["chunks"]),
            "section": text.split("\n", 1)[0],
            "text": text,
            "n_tokens": len(text.split()),
        }
        for p in pages
        for i, text in enumerate(p["chunks"])
    ]
    doc_rows = [
        {
            "page_id": p["page_id"],
            "title": p["title"],
            "revision_id": p["page_id"] * 10,
            "timestamp": "2026-06-01T00:00:00Z",
            "is_disambiguation": False,
            "converter": "markdown",
            "sections": [c.split("\n", 1)[0] for c in p["chunks"]],
            "markdown": "\n\n".join(p["chunks"]),
            "n_tokens": sum(len(c.split()) for c in p["chunks"]),
        }
        for p in pages
    ]
    redirect_rows = [
        {"page_id": 9000 + i, "title": t, "target": g, "ns": ns} for i, (t, g, ns) in enumerate(redirects)
    ]
    for name, rows, schema in (
        ("chunks", chunk_rows, CHUNKS),
        ("docs", doc_rows, DOCS),
        ("redirects", redirect_rows, REDIRECTS),
    ):
        (root / name).mkdir(parents=True, exist_ok=True)
        step = max(1, -(-len(rows) // parts))
        for k in range(parts):
            table = pa.Table.from_pylist(rows[k * step : (k + 1) * step], schema=schema)
            pq.write_table(table, root / name / f"part-{k:05d}.parquet", row_group_size=4)
    (root / "manifest.json").write_text(json.dumps({"kind": "sws-corpus", "fingerprint": fingerprint}))
    return root


def zero_half(path: Path, start: float = 0.25) -> None:
    """Overwrite half of a file with zeros from ``start`` (a fraction of its size); the size stays."""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(int(size * start))
        f.write(bytes(size // 2))


class LetterCountEmbedder(Embedder):
    """A cheap deterministic embedder for layout tests: letter counts of the text (16-d)."""

    kind = "test-letter-counts"

    def __init__(self, model: str = "letter-counts", query_task: str | None = ""):
        super().__init__(model, query_task)

    @property
    def dim(self) -> int:
        return 16

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[1 + t.count(c) for c in " etaoinshrdlucmw"] for t in texts], dtype=np.float32)


@cache
def minilm():
    from sws.index.embedders import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(device="cpu")


_BUILT: dict[str, Path] = {}


# `sws serve` over the leads index with its queries embedded as in process (fp32 MiniLM on torch) rather than
# by the served default (OpenVINO bf16 where the CPU has bf16 units), so that what it answers does not depend
# on the CPU: the reference-run fixtures were recorded against it (tests/data/reference_runs/make.py)
LEADS_SERVE_ARGS = ("serve.embedding.runtime=torch",)


def build_leads_index(root: Path) -> Path:
    """The leads corpus under ``root/corpus`` indexed into ``root/index`` (MiniLM, in-process embedding,
    2 FAISS shards); returns ``root``."""
    from sws.index import FaissIndexer, build_index

    corpus = write_corpus(root / "corpus", lead_pages())
    build_index(
        corpus,
        root / "index",
        embedder=minilm(),
        dense=FaissIndexer(m=16, shard_rows=16),
        embed_options={"workers": 0, "rows_per_unit": 8},
    )
    return root


def built_leads_index(tmp_path_factory) -> Path:
    """:func:`build_leads_index` once per test session."""
    if "leads" not in _BUILT:
        _BUILT["leads"] = build_leads_index(tmp_path_factory.mktemp("leads"))
    return _BUILT["leads"]


def reference_index(leads_root: Path, root: Path, metric: str) -> Path:
    """The leads index exported in the reference's layout (``metric``: "ip" or "l2") under ``root/reference``
    and imported into ``root/index`` with the leads index's own query embedder (MiniLM): ``root/index``."""
    from sws.index import WikiIndex
    from sws.index.reference import export_reference, import_reference

    export_reference(leads_root / "index", root / "reference", metric)
    spec = WikiIndex.open(leads_root / "index", check_ids=False).manifest["embedder"]["spec"]
    import_reference(root / "reference", root / "index", embedder=spec)
    return root / "index"
