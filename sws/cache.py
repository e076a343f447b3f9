"""Where sws caches what it derives locally: ``$SWS_CACHE``, else ``./.cache`` when that directory exists, else
``~/.cache/sws``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(name: str) -> Path:
    """``<cache root>/name`` (not created)."""
    if os.environ.get("SWS_CACHE"):
        return Path(os.environ["SWS_CACHE"]) / name
    if Path(".cache").is_dir():
        return Path(".cache") / name
    return Path.home() / ".cache" / "sws" / name
