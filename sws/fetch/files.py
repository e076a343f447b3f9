"""Fetching a list of remote files into a directory, verified, recorded in its ``fetch-manifest.json``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from sws.fetch.checksums import choose_algorithm, new_hasher
from sws.fetch.errors import ChecksumError, FetchError
from sws.fetch.http import HttpFetcher
from sws.fetch.manifest import FETCH_MANIFEST, read_fetch_manifest, update_fetch_manifest, utc_now

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """One file to fetch.

    Args:
        name: the local file name.
        urls: where to get it, tried in order (more than one only for files with a pinned digest, so every
            mirror must serve the same bytes).
        bytes: published size, if known.
        digests: published digests ``{"sha1"|"md5"|"sha256": hex}``; the strongest is verified.
        checksum_source: where the digests were published (recorded in the manifest).
        extra: more fields for the file's manifest entry.
    """

    name: str
    urls: tuple[str, ...]
    bytes: int | None = None
    digests: Mapping[str, str] = field(default_factory=dict)
    checksum_source: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def with_sizes(fetcher: HttpFetcher, files: list[RemoteFile]) -> list[RemoteFile]:
    """``files`` with unknown sizes asked from the server (HEAD); a missing file raises as a download would."""
    out = []
    for f in files:
        if f.bytes is None:
            errors: list[FetchError] = []
            for url in f.urls:
                try:
                    f = replace(f, bytes=fetcher.remote_size(url))
                    break
                except FetchError as exc:
                    errors.append(exc)
            else:
                raise _combined(f, errors)
        out.append(f)
    return out


def fetch_files(
    fetcher: HttpFetcher,
    files: list[RemoteFile],
    out_dir: str | Path,
    *,
    sources: dict[str, dict] | None = None,
    check: Callable[[Path, RemoteFile], dict] | None = None,
) -> list[dict]:
    """Download every file into ``out_dir`` (verified files already there are kept) and record each in
    ``out_dir/fetch-manifest.json`` as soon as it is verified.

    Args:
        fetcher: the downloader.
        files: what to fetch.
        out_dir: the target directory.
        sources: where the files come from (``{"dump": {...}}``), stored in the manifest.
        check: called on each verified file; its dict is added to the file's manifest entry (it raises on a
            file that is no use).

    Returns:
        One entry per file: the manifest entry plus ``name``, ``status`` (downloaded, resumed or present) and
        ``transferred`` bytes.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / FETCH_MANIFEST
    previous = read_fetch_manifest(manifest_path)["files"] if manifest_path.is_file() else {}
    results = []
    for f in files:
        dest = out_dir / f.name
        record = _verified_present(dest, f, previous.get(f.name), fetcher.progress)
        if record is not None:
            status, transferred = "present", 0
        else:
            done = _download(fetcher, f, dest)
            status = "resumed" if done.resumed_from else "downloaded"
            transferred = done.transferred
            record = {
                "url": done.url,
                "bytes": done.bytes,
                **done.digests,
                "checksum_source": f.checksum_source if f.digests else "computed on download",
                "fetched": utc_now(),
                **f.extra,
            }
        if check is not None:
            record |= check(dest, f)
        update_fetch_manifest(manifest_path, {f.name: record}, sources)
        results.append({"name": f.name, "status": status, "transferred": transferred, **record})
    return results


def _download(fetcher: HttpFetcher, f: RemoteFile, dest: Path):
    errors: list[FetchError] = []
    for i, url in enumerate(f.urls):
        try:
            return fetcher.download(url, dest, size=f.bytes, expected=f.digests)
        except FetchError as exc:  # a refusal, an exhausted retry or a bad checksum: try the next mirror
            errors.append(exc)
            if i + 1 < len(f.urls):
                logger.warning("%s; trying %s", exc, f.urls[i + 1])
    raise _combined(f, errors)


def _combined(f: RemoteFile, errors: list[FetchError]) -> FetchError:
    if len(errors) == 1:
        return errors[0]
    kind = ChecksumError if all(isinstance(e, ChecksumError) for e in errors) else FetchError
    return kind(f"{f.name}: every source failed:\n  " + "\n  ".join(str(e) for e in errors))


def _verified_present(dest: Path, f: RemoteFile, previous: dict | None, progress: bool) -> dict | None:
    """The manifest entry for a complete file already at ``dest`` whose checksum matches the published one
    (or, for files without one, the one recorded when it was fetched); None when it must be fetched."""
    if not dest.is_file():
        return None
    expected = dict(f.digests)
    if not expected and previous:
        expected = {a: previous[a] for a in ("sha256", "sha1", "md5") if previous.get(a)}
    size = dest.stat().st_size
    wanted_size = f.bytes if f.bytes is not None else (previous or {}).get("bytes")
    if not expected or (wanted_size is not None and size != wanted_size):
        return None
    algorithm = choose_algorithm(expected)
    hasher = new_hasher(algorithm)
    with (
        open(dest, "rb") as src,
        tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=f"verify {f.name}",
            disable=not progress,
        ) as bar,
    ):
        while chunk := src.read(1 << 22):
            hasher.update(chunk)
            bar.update(len(chunk))
    if hasher.hexdigest() != expected[algorithm].lower():
        logger.warning(
            "%s is present but its %s differs from the published one; fetching it again", dest, algorithm
        )
        return None
    if previous and previous.get(algorithm) == hasher.hexdigest():
        return dict(previous)
    return {
        "url": f.urls[0],
        "bytes": size,
        algorithm: hasher.hexdigest(),
        "checksum_source": f.checksum_source,
        "fetched": utc_now(),
        **f.extra,
    }
