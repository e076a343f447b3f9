"""Reciprocal rank fusion with deterministic ties (CONTRACT §1.8 and Part 1, 2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Fused:
    """A fused candidate; ranks are 1-based positions in each input list (None: absent)."""

    chunk_id: str
    score: float
    text_rank: int | None
    vector_rank: int | None

    @property
    def source(self) -> str:
        if self.text_rank and self.vector_rank:
            return "both"
        return "keywords" if self.text_rank else "vector"


def _first_ranks(ids: Sequence[str]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, chunk_id in enumerate(ids, 1):
        if chunk_id:
            ranks.setdefault(chunk_id, rank)
    return ranks


def rrf_fuse(text_ids: Sequence[str], vector_ids: Sequence[str], k: int = RRF_K) -> list[Fused]:
    """``score(c) = sum over lists of 1 / (k + rank)``; a repeated id keeps its first rank; empty ids are skipped.

    Order: score descending, then the best single-list rank, then chunk id (the reference leaves
    ties to Python's string-hash order; we make them deterministic).
    """
    text, vector = _first_ranks(text_ids), _first_ranks(vector_ids)
    fused = []
    for chunk_id in text.keys() | vector.keys():
        t, v = text.get(chunk_id), vector.get(chunk_id)
        score = (1.0 / (k + t) if t else 0.0) + (1.0 / (k + v) if v else 0.0)
        fused.append(Fused(chunk_id, score, t, v))
    return sorted(
        fused, key=lambda f: (-f.score, min(r for r in (f.text_rank, f.vector_rank) if r), f.chunk_id)
    )
