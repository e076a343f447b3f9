"""Memory of a stage: ``/proc`` readings and the peaks of a ``with`` body (used by ``scale_stages.py``).

A stage's peak RSS is the process's ``VmHWM``, reset per stage by writing 5 to ``/proc/self/clear_refs``
(Linux), so each component's peak is its own. RSS also counts the pages of files the stage memory-maps, which
the kernel drops under pressure; what the stage itself holds is its anonymous memory, ``RssAnon``, whose peak
is sampled every 20 ms. The kernel's counters are approximate, so a late ``VmHWM`` can be below an earlier
``VmRSS``: each peak is the highest of every reading, the one before the stage and the one after it included.
Sizes are bytes, times seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def memory(pid: int | str = "self") -> dict[str, int]:
    """``VmRSS``, ``VmHWM`` (peak), ``RssAnon``, ``RssFile``, ``RssShmem`` of a process, in bytes."""
    keys = {
        "VmRSS": "rss",
        "VmHWM": "peak_rss",
        "RssAnon": "rss_anon",
        "RssFile": "rss_file",
        "RssShmem": "rss_shmem",
    }
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in keys:
            out[keys[name]] = int(value.split()[0]) * 1024
    return out


def reset_peak() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@contextmanager
def peaks(first: dict[str, int], interval_s: float = 0.02) -> Iterator[dict[str, int]]:
    """Per ``memory()`` figure, the highest of ``first`` and of this process's readings every ``interval_s``
    while the ``with`` body runs and once after it. Within one reading ``rss_anon`` <= ``rss`` <= ``peak_rss``,
    so the peaks keep that order and ``first["rss"]`` <= the peak ``peak_rss``, whenever the samples fall."""
    high, done = dict(first), threading.Event()

    def take() -> None:
        for key, value in memory().items():
            high[key] = max(high[key], value)

    def sample() -> None:
        while not done.wait(interval_s):
            take()

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield high
    finally:
        done.set()
        sampler.join()
        take()


@contextmanager
def stage(name: str, record: dict[str, dict]) -> Iterator[None]:
    """Record the wall time, peak RSS and peak anonymous RSS of the ``with`` body as ``record[name]``
    (stages recorded inside it count towards its peaks)."""
    exact, known = reset_peak(), set(record)
    before, started = memory(), time.perf_counter()
    with peaks(before) as high:
        yield
    nested = [r for key, r in record.items() if key not in known]  # they reset the peak
    record[name] = {
        "seconds": round(time.perf_counter() - started, 3),
        "peak_rss": max([high["peak_rss"], *(r["peak_rss"] for r in nested)]),
        "peak_rss_anon": max([high["rss_anon"], *(r["peak_rss_anon"] for r in nested)]),
        "rss_before": before["rss"],
        "peak_exact": exact,  # False: the peak may be an earlier stage's of the same process
    }
