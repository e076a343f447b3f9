"""``benchmarks/stage_memory.py``: a stage's peaks are at least every reading taken of it, however the samples
fall."""

from __future__ import annotations

from tests.benchmarks.conftest import bench_module

stage_memory = bench_module("stage_memory")

# /proc/self/status as read before and after a stage of the busy run that failed (issue 21): the kernel's RSS
# counters are approximate, so the high-water mark read at the end was below the RSS read before
BEFORE = {"rss": 618_622_976, "peak_rss": 618_622_976, "rss_anon": 590_000_000, "rss_file": 28_622_976}
AFTER = {"rss": 600_000_000, "peak_rss": 618_471_424, "rss_anon": 571_000_000, "rss_file": 29_000_000}


def _ordered(record: dict[str, dict]) -> None:
    for name, r in record.items():
        assert 0 < r["peak_rss_anon"] <= r["peak_rss"] and r["rss_before"] <= r["peak_rss"], (name, r)


def test_peaks_hold_for_readings_the_kernel_gave(monkeypatch):
    readings = iter([BEFORE])
    monkeypatch.setattr(stage_memory, "memory", lambda pid="self": next(readings, AFTER))
    record: dict[str, dict] = {}
    with stage_memory.stage("build_index", record), stage_memory.stage("faiss", record):
        pass
    _ordered(record)
    assert record["build_index"]["peak_rss"] == BEFORE["rss"]


def test_peaks_hold_for_this_process():
    record: dict[str, dict] = {}
    with stage_memory.stage("outer", record):
        with stage_memory.stage("inner", record):
            held = bytearray(1 << 24)
        del held
    _ordered(record)
