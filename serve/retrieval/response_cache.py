"""A bounded LRU of rendered response bodies (bytes), for requests whose answer is a pure function of the index.

``open_url`` is one: the index is immutable while a replica serves it (a new index is a new deployment, so a
new, empty cache), hence no invalidation. Only successful answers are stored; errors are raised before
:meth:`put` and never cached. One event loop touches the cache, so no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class ResponseCache:
    """At most ``entries`` bodies, least recently used evicted first; ``entries=0`` stores nothing."""

    def __init__(self, entries: int):
        if entries < 0:
            raise ValueError(f"response cache entries must be at least 0, got {entries}")
        self.entries = entries
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._bodies)

    def get(self, key: Hashable) -> bytes | None:
        body = self._bodies.get(key)
        if body is not None:
            self._bodies.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        if not self.entries:
            return
        self._bodies[key] = body
        self._bodies.move_to_end(key)
        if len(self._bodies) > self.entries:
            self._bodies.popitem(last=False)
