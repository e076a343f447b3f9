"""A memory-mapped FAISS file opens with none of its pages resident in the process (FAISS's validation read the
whole HNSW graph), and searches it as an index read whole into memory does."""

from __future__ import annotations

import re
from pathlib import Path

import faiss
import numpy as np
import pytest

from sws.index.dense.mapped_pages import read_only_mappings, release_mapped_pages
from sws.index.dense.searcher import read_faiss_index


def resident_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of ``path`` (``/proc/self/smaps``)."""
    total, current = 0, None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            current = line.split(maxsplit=5)[5].strip() if len(line.split()) > 5 else ""
        elif line.startswith("Rss:") and current == str(path.resolve()):
            total += int(line.split()[1])
    return total


@pytest.fixture(scope="module")
def hnsw_file(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """An ``IndexHNSWSQ`` fp16 of 20k unit vectors (the reference's form, smaller), and queries."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((20_000, 128)).astype("float32")
    faiss.normalize_L2(vectors)
    index = faiss.IndexHNSWSQ(128, faiss.ScalarQuantizer.QT_fp16, 32, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 40
    index.add(vectors)
    path = tmp_path_factory.mktemp("mapped") / "index.faiss"
    faiss.write_index(index, str(path))
    return path, vectors[:20] + 0.05 * rng.standard_normal((20, 128)).astype("float32")


def test_opening_leaves_no_page_of_the_file_resident(hnsw_file):
    path, _ = hnsw_file
    validated = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    assert resident_kib(path) > 0  # what FAISS's own open leaves: the graph its validation read
    del validated
    index = read_faiss_index(path)
    assert read_only_mappings(path) and resident_kib(path) == 0
    assert index.ntotal == 20_000


def test_searches_answer_as_an_index_read_whole(hnsw_file):
    path, queries = hnsw_file
    mapped, whole = read_faiss_index(path), faiss.read_index(str(path))
    for index in (mapped, whole):
        index.hnsw.efSearch = 64
    mapped_result, whole_result = mapped.search(queries, 10), whole.search(queries, 10)
    assert resident_kib(path) > 0  # the searches mapped back what they read
    np.testing.assert_array_equal(mapped_result[1], whole_result[1])
    np.testing.assert_array_equal(mapped_result[0], whole_result[0])


def test_a_file_not_mapped_is_left_alone(tmp_path):
    path = tmp_path / "not-mapped.faiss"
    path.write_bytes(b"x")
    assert release_mapped_pages(path) == 0
