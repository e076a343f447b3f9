"""Fetching QA datasets in the form ``sws.eval`` loads: where each comes from is its :class:`QASource`
(the datasets register theirs, ``sws.eval.paper_datasets``).

Files are saved under names that :func:`sws.eval.infer_dataset` recognises, loaded once after download (the
item count and a fingerprint of the ``random_300`` ids go into ``fetch-manifest.json``), and verified against a
pinned sha256 where one is known; for the others the manifest records the sha256 of what was fetched, and a
later fetch into the same directory keeps the file only if it still matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sws.fetch.files import RemoteFile, fetch_files, with_sizes
from sws.fetch.http import HttpFetcher


@dataclass(frozen=True, slots=True)
class QASource:
    """Where one benchmark's evaluation split comes from.

    Args:
        dataset: canonical name (``sws.eval.dataset_names()``).
        filename: the local file name (its prefix tells the loader the dataset, its suffix the format).
        urls: plain HTTPS URLs, tried in order (several only with a pinned ``sha256``).
        split: which split it is.
        items: the number of items the loader reads from the published file.
        sha256: pinned digest, when known.
        bytes: pinned size, when known.
        licence: the dataset's licence, as its authors state it ("" when not verified).
    """

    dataset: str
    filename: str
    urls: tuple[str, ...]
    split: str
    items: int
    sha256: str | None = None
    bytes: int | None = None
    licence: str = ""


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` through a mirror that keeps the host in the path: ``https://h/p`` -> ``MIRROR/h/p``."""
    if not mirror:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def remote_files(sources: Iterable[QASource], mirror: str | None = None) -> list[RemoteFile]:
    return [
        RemoteFile(
            s.filename,
            tuple(mirrored(u, mirror) for u in s.urls),
            s.bytes,
            {"sha256": s.sha256} if s.sha256 else {},
            "pinned in sws.fetch.qa" if s.sha256 else None,
            {"dataset": s.dataset, "split": s.split, "licence": s.licence},
        )
        for s in sources
    ]


def plan_datasets(
    fetcher: HttpFetcher, sources: Iterable[QASource], mirror: str | None = None
) -> list[RemoteFile]:
    """The files to fetch, with sizes (asked from the servers where not pinned): what ``--dry-run`` lists."""
    return with_sizes(fetcher, remote_files(sources, mirror))


def fetch_datasets(
    fetcher: HttpFetcher,
    sources: Iterable[QASource],
    out_dir: str | Path,
    mirror: str | None = None,
    check: Callable[[Path, QASource], dict] | None = None,
) -> list[dict]:
    """Download and verify each dataset into ``out_dir``; returns the manifest entries.

    ``check(path, source)`` is called on each verified file (the CLI loads it as the evaluation will); its
    dict goes into the file's manifest entry, and a :class:`FetchError` it raises stops the fetch.

    Raises:
        FetchError: a download fails, a checksum differs, or ``check`` refuses a file.
    """
    sources = list(sources)
    by_file = {s.filename: s for s in sources}
    on_file = (lambda path, remote: check(path, by_file[remote.name])) if check else None
    return fetch_files(fetcher, remote_files(sources, mirror), out_dir, check=on_file)
