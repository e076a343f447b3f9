"""``fetch-manifest.json``: what a fetch left in a directory (URLs, sizes, verified checksums, date), and
what the corpus build checks its inputs against.

    {"kind": "sws-fetch", "version": 1, "updated": "2026-06-03T10:00:00Z",
     "sources": {"dump": {"wiki": "enwiki", "date": "20260601", "base_url": ..., "job": ..., "status_url": ...}},
     "files": {"enwiki-20260601-pages-articles-multistream.xml.bz2":
                 {"url": ..., "bytes": 25012345678, "sha1": "…", "checksum_source": "dumpstatus.json",
                  "fetched": "2026-06-03T10:00:00Z"}, ...}}

Each file records the digest that was verified (``sha1`` or ``md5`` for dumps, as Wikimedia publishes them;
``sha256`` for the QA datasets). Fetching again into the same directory updates the entries it touches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from sws.fetch.checksums import ALGORITHMS
from sws.fetch.errors import FetchManifestError
from sws.io import write_text_atomically

FETCH_MANIFEST = "fetch-manifest.json"
KIND = "sws-fetch"


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_fetch_manifest(path: str | Path) -> dict:
    """The parsed manifest.

    Raises:
        FetchManifestError: no such file, not JSON, or not a fetch manifest.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FetchManifestError(f"fetch manifest {path} not found") from exc
    except (OSError, ValueError) as exc:
        raise FetchManifestError(f"cannot read fetch manifest {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("files"), dict):
        raise FetchManifestError(f"{path} is not an sws fetch manifest (kind {KIND!r} with a 'files' map)")
    return data


def update_fetch_manifest(
    path: str | Path, files: dict[str, dict], sources: dict[str, dict] | None = None
) -> dict:
    """Merge ``files`` (by name) and ``sources`` into the manifest at ``path`` (created if missing),
    written atomically; returns the new manifest."""
    path = Path(path)
    manifest = (
        read_fetch_manifest(path)
        if path.is_file()
        else {"kind": KIND, "version": 1, "updated": "", "sources": {}, "files": {}}
    )
    manifest["updated"] = utc_now()
    manifest.setdefault("sources", {}).update(sources or {})
    manifest["files"].update(files)
    manifest["files"] = dict(sorted(manifest["files"].items()))
    write_text_atomically(path, json.dumps(manifest, indent=1) + "\n")
    return manifest


def _expectation(record: dict, manifest: Path) -> dict:
    """``{"bytes": n, <algorithm>: hex, "manifest": path}`` with the one digest a build should compare:
    sha256 when recorded (the build computes it anyway), else sha1, else md5."""
    algorithm = next((a for a in ALGORITHMS if record.get(a)), None)
    if algorithm is None:
        raise FetchManifestError(f"{manifest}: entry {record.get('url')} records no sha256, sha1 or md5")
    return {
        "bytes": record.get("bytes"),
        algorithm: str(record[algorithm]).lower(),
        "manifest": str(manifest),
    }


def expected_digests(paths: Iterable[str | Path], manifest: str | Path | None = None) -> dict[str, dict]:
    """What a fetch manifest recorded for each input, keyed by resolved path (see :func:`_expectation`).

    With ``manifest`` given, every input must be listed in it (by file name). Without, each input is looked
    up in the ``fetch-manifest.json`` next to it, if there is one; inputs it does not list are not checked.

    Raises:
        FetchManifestError: the given manifest is missing or unreadable, or does not list an input.
    """
    out: dict[str, dict] = {}
    cache: dict[Path, dict | None] = {}
    for p in paths:
        p = Path(p)
        where = Path(manifest) if manifest else p.resolve().parent / FETCH_MANIFEST
        if where not in cache:
            if manifest and not where.is_file():
                raise FetchManifestError(
                    f"fetch manifest {where} not found: fetch the dump with `sws fetch dump` (which writes it), "
                    f"or set dump.fetch_manifest=null to build without checking the dump"
                )
            cache[where] = read_fetch_manifest(where) if manifest or where.is_file() else None
        data = cache[where]
        if data is None:
            continue
        record = data["files"].get(p.name)
        if record is None:
            if manifest:
                raise FetchManifestError(
                    f"{p.name} is not listed in fetch manifest {where} (it lists {', '.join(data['files'])}); "
                    f"fetch it with `sws fetch dump`, or set dump.fetch_manifest=null to build unverified"
                )
            continue
        out[str(p.resolve())] = _expectation(record, where)
    return out
