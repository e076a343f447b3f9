"""A bounded LRU of rendered response bodies (bytes), for requests whose answer is a pure function of the index.

``open_url`` is one: the index is immutable while a replica serves it (a new index is a new deployment, so a
new, empty cache), hence no invalidation. Only successful answers are stored; errors are raised before
:meth:`put` and never cached. One event loop touches the cache, so no lock.

It is bounded twice: by entries and by bytes (each body and its key, so a few distinct long pages, or many
requests with long keys, cannot fill a replica's memory).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

MAX_BYTES = 64 * 2**20  # the default byte bound (``serve.open_url_cache_bytes``)


class ResponseCache:
    """At most ``entries`` bodies and ``max_bytes`` of bodies and keys, least recently used evicted first; a
    body larger than ``max_bytes`` on its own is not stored; ``entries=0`` or ``max_bytes=0`` stores nothing."""

    def __init__(self, entries: int, max_bytes: int = MAX_BYTES):
        if entries < 0 or max_bytes < 0:
            raise ValueError(
                f"response cache entries and bytes must be at least 0, got {entries}, {max_bytes}"
            )
        self.entries, self.max_bytes = entries, max_bytes
        self.bytes = 0  # held now, bodies and keys
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._bodies)

    def get(self, key: Hashable) -> bytes | None:
        body = self._bodies.get(key)
        if body is not None:
            self._bodies.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        size = _size(key) + len(body)
        if not self.entries or size > self.max_bytes:
            return
        if (old := self._bodies.pop(key, None)) is not None:
            self.bytes -= _size(key) + len(old)
        self._bodies[key] = body
        self.bytes += size
        while len(self._bodies) > self.entries or self.bytes > self.max_bytes:
            evicted, evicted_body = self._bodies.popitem(last=False)
            self.bytes -= _size(evicted) + len(evicted_body)


def _size(key: Hashable) -> int:
    """The bytes of a key's text (its strings and bytes, in tuples too); other parts count nothing."""
    if isinstance(key, str | bytes):
        return len(key)
    return sum(map(_size, key)) if isinstance(key, tuple) else 0
