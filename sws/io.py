"""Writing a file so that readers never see part of it: the whole content or the previous file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a hidden temporary file beside ``path`` (``.NAME.PID.tmp``, so no ``*.parquet``
    or ``*.json`` pattern picks it up), then rename it onto ``path``; a failed write leaves no temporary file.
    Missing parent directories are created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """:func:`write_atomically` of UTF-8 text."""
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
