import os
import subprocess
import sys
from pathlib import Path

import pytest

from sws.search import rrf_fuse


def test_scores_ranks_and_sources():
    fused = rrf_fuse(["a", "b", "c"], ["c", "d"])
    by_id = {f.chunk_id: f for f in fused}
    assert by_id["c"].score == pytest.approx(1 / 63 + 1 / 61)
    assert (by_id["c"].text_rank, by_id["c"].vector_rank, by_id["c"].source) == (3, 1, "both")
    assert by_id["a"].source == "keywords" and by_id["d"].source == "vector"
    assert [f.chunk_id for f in fused] == ["c", "a", "b", "d"]


def test_first_rank_kept_and_empty_ids_skipped():
    fused = rrf_fuse(["a", "", "a", "b"], [])
    assert [(f.chunk_id, f.text_rank) for f in fused] == [("a", 1), ("b", 4)]


def test_ties_are_deterministic_score_then_best_rank_then_id():
    fused = rrf_fuse(["p", "x"], ["q", "y"])  # p/q tie at rank 1, x/y at rank 2
    assert [f.chunk_id for f in fused] == ["p", "q", "x", "y"]


def test_order_does_not_depend_on_the_string_hash_seed():
    code = (
        "import random; from sws.search import rrf_fuse; r = random.Random(7); ids = [f'{i}_0' for i in range(40)]; "
        "print([f.chunk_id for f in rrf_fuse(r.sample(ids, 20), r.sample(ids, 20))])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"PYTHONHASHSEED": seed},
            cwd=Path(__file__).parents[2],
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(runs) == 1


def test_empty_inputs():
    assert rrf_fuse([], []) == []
