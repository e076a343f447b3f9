"""The open_url response cache (``serve.retrieval.response_cache``): bounded in bytes as well as in entries."""

from __future__ import annotations

import pytest

from serve.retrieval.response_cache import MAX_BYTES, ResponseCache
from sws.config import ServeConfig


def _held(cache: ResponseCache, keys) -> int:
    return sum(len(body) for key in keys if (body := cache.get(key)) is not None)


def test_the_default_bound_holds_distinct_large_answers_to_its_bytes():
    """4,096 distinct 100 KB pages (the entry bound of ``serve.open_url_cache_entries``) keep at most
    ``serve.open_url_cache_bytes``, the most recent ones."""
    cache, keys = (
        ResponseCache(ServeConfig().open_url_cache_entries),
        [("/open_url", str(i)) for i in range(4096)],
    )
    for key in keys:
        cache.put(key, bytes(100_000))
    assert ServeConfig().open_url_cache_bytes == MAX_BYTES
    assert MAX_BYTES - 100_010 < _held(cache, keys) <= MAX_BYTES
    assert cache.get(keys[-1]) is not None and cache.get(keys[0]) is None


def test_bytes_count_keys_and_evict_the_least_recent():
    cache = ResponseCache(100, max_bytes=30)
    cache.put("a", b"x" * 9)  # 10 bytes with its key
    cache.put("b", b"x" * 9)
    assert cache.get("a")  # a is now the most recent
    cache.put("c" * 11, b"")  # a long key weighs too: b goes
    assert (cache.get("b"), cache.bytes) == (None, 21)
    cache.put("a", b"x" * 19)  # replaced: its old size is given back, then c goes
    assert (len(cache), cache.bytes, cache.get("c" * 11)) == (1, 20, None)
    cache.put("d", b"x" * 30)  # larger than the whole bound: not stored, nothing evicted
    assert (len(cache), cache.get("d")) == (1, None)
    off = ResponseCache(100, max_bytes=0)
    off.put("a", b"1")
    assert len(off) == 0
    with pytest.raises(ValueError, match="at least 0"):
        ResponseCache(1, max_bytes=-1)


def test_the_byte_bound_is_a_checked_setting():
    with pytest.raises(ValueError, match="open_url_cache_bytes=-1 must be at least 0"):
        ServeConfig(open_url_cache_bytes=-1)
