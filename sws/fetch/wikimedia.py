"""Wikimedia dumps: which files make a ``pages-articles-multistream`` dump, their published checksums, and
the newest complete dump date.

Layout (dumps.wikimedia.org and its mirrors): ``BASE/WIKI/`` lists the dump dates; ``BASE/WIKI/DATE/`` holds
``dumpstatus.json`` (per job: ``status`` and ``files`` with ``size``, ``url``, ``sha1``, ``md5``) and
``WIKI-DATE-sha1sums.txt`` / ``WIKI-DATE-md5sums.txt``. The single multistream file and its index come from the
job ``articlesmultistreamdumprecombine`` (large wikis) or ``articlesmultistreamdump`` (small wikis, which
are not split); the split part files (``…-multistream1.xml-p1p41242.bz2`` and ``…-multistream-index1.txt-…``)
from ``articlesmultistreamdump``. Mirrors that carry no ``dumpstatus.json`` are read through the sums files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from sws.fetch.checksums import parse_sums
from sws.fetch.errors import FetchError, RemoteFileError
from sws.fetch.files import RemoteFile
from sws.fetch.http import HttpFetcher

WIKIMEDIA_DUMPS = "https://dumps.wikimedia.org"
RECOMBINE_JOB = "articlesmultistreamdumprecombine"
MULTISTREAM_JOB = "articlesmultistreamdump"
_DATE_LINK = re.compile(r'href="(\d{8})/?"')
_DUMP_NAME = re.compile(r"^(?P<wiki>[a-z0-9_]+)-(?P<date>\d{8}|latest)-pages-articles-multistream")


@dataclass(frozen=True, slots=True)
class DumpPlan:
    """The files of one dump and where their checksums come from.

    Args:
        wiki: e.g. ``enwiki``.
        date: ``YYYYMMDD``.
        base_url: the dumps site or mirror.
        job: the dump job the files belong to (None when read from a sums file).
        status_url: the ``dumpstatus.json`` read (None when the mirror has none).
        split: split part files rather than the single file.
        files: dump and index files, paired by position in :attr:`dumps` / :attr:`indexes`.
    """

    wiki: str
    date: str
    base_url: str
    job: str | None
    status_url: str | None
    split: bool
    files: list[RemoteFile] = field(default_factory=list)

    @property
    def dumps(self) -> list[str]:
        return [f.name for f in self.files if "-multistream-index" not in f.name]

    @property
    def indexes(self) -> list[str]:
        return [f.name for f in self.files if "-multistream-index" in f.name]

    def source(self) -> dict:
        """The manifest's ``sources.dump`` entry."""
        return {
            "wiki": self.wiki,
            "date": self.date,
            "base_url": self.base_url,
            "job": self.job,
            "status_url": self.status_url,
            "split": self.split,
            "dumps": self.dumps,
            "indexes": self.indexes,
        }


def parse_dump_name(name: str) -> tuple[str, str, bool] | None:
    """``(wiki, date, split)`` of a multistream dump or index file name, or None for other names."""
    match = _DUMP_NAME.match(name)
    if not match:
        return None
    return match["wiki"], match["date"], bool(re.search(r"-multistream(-index)?\d+\.", name))


def _wanted(name: str, wiki: str, date: str, split: bool) -> bool:
    stem = re.escape(f"{wiki}-{date}-pages-articles-multistream")
    if split:
        pattern = rf"{stem}(\d+\.xml|-index\d+\.txt)-p\d+p\d+\.bz2"
    else:
        pattern = rf"{stem}(\.xml|-index\.txt)\.bz2"
    return re.fullmatch(pattern, name) is not None


def _order(name: str) -> tuple:
    """Split parts in page order, each dump before its index (so dumps and indexes pair by position)."""
    pages = re.search(r"-p(\d+)p(\d+)\.bz2$", name)
    return (int(pages[1]) if pages else 0, "-multistream-index" in name, name)


def _job(status: dict, split: bool, status_url: str) -> tuple[str, dict]:
    """The job whose files to fetch: the multistream job for split parts; for the single file the recombine
    job, except on small wikis, whose multistream job writes the single file itself."""
    jobs = status.get("jobs")
    if not isinstance(jobs, dict):
        raise FetchError(f"{status_url}: no 'jobs' in this dumpstatus.json")
    multi = jobs.get(MULTISTREAM_JOB)
    if split or (isinstance(multi, dict) and _single_file_listed(multi)) or RECOMBINE_JOB not in jobs:
        name = MULTISTREAM_JOB
    else:
        name = RECOMBINE_JOB
    if not isinstance(jobs.get(name), dict):
        raise FetchError(f"{status_url}: no {name} job in this dump")
    return name, jobs[name]


def _single_file_listed(job: dict) -> bool:
    return any(n.endswith("-pages-articles-multistream.xml.bz2") for n in job.get("files") or {})


def plan_dump(
    fetcher: HttpFetcher, wiki: str, date: str, *, base_url: str = WIKIMEDIA_DUMPS, split: bool = False
) -> DumpPlan:
    """The multistream dump and index files of ``wiki`` at ``date`` with sizes and published checksums.

    Raises:
        RemoteFileError: no such wiki or date on the server.
        FetchError: the dump is not finished, or a file has no published checksum.
    """
    base_url = base_url.rstrip("/")
    if date == "latest":
        date = latest_date(fetcher, wiki, base_url=base_url, split=split)
    folder = f"{base_url}/{wiki}/{date}"
    status_url: str | None = f"{folder}/dumpstatus.json"
    job_name = None
    files: list[RemoteFile] = []
    missing_status = None
    try:
        status = _json(fetcher, status_url)
    except RemoteFileError as exc:
        if exc.status not in (404, 410):
            raise
        # a mirror without status files: the sums files list the dump
        status, status_url, missing_status = None, None, exc
    if status is not None:
        job_name, job = _job(status, split, status_url)
        if job.get("status") != "done":
            raise FetchError(
                f"{wiki} {date}: the {job_name} job is {job.get('status')!r}, not 'done' ({status_url}); "
                f"pick another --date, or --date latest for the newest complete dump"
            )
        for name, meta in job["files"].items():
            if not _wanted(name, wiki, date, split):
                continue
            url = meta.get("url") or f"/{wiki}/{date}/{name}"
            files.append(
                RemoteFile(
                    name,
                    (base_url + url if url.startswith("/") else url,),
                    meta.get("size"),
                    {a: meta[a] for a in ("sha1", "md5") if meta.get(a)},
                    "dumpstatus.json",
                )
            )
    if status is None or any(not f.digests for f in files):
        files = _from_sums(fetcher, folder, wiki, date, split, {f.name: f for f in files}, missing_status)
    if not files:
        raise FetchError(f"{folder}: no {'split ' if split else ''}pages-articles-multistream files listed")
    files.sort(key=lambda f: _order(f.name))
    return DumpPlan(wiki, date, base_url, job_name, status_url, split, files)


def _from_sums(
    fetcher: HttpFetcher,
    folder: str,
    wiki: str,
    date: str,
    split: bool,
    known: dict[str, RemoteFile],
    missing_status: RemoteFileError | None = None,
) -> list[RemoteFile]:
    """Fill in (or, without a status file, list) the files from ``*-sha1sums.txt``, else ``*-md5sums.txt``."""
    for algorithm in ("sha1", "md5"):
        name = f"{wiki}-{date}-{algorithm}sums.txt"
        try:
            sums = parse_sums(fetcher.get_text(f"{folder}/{name}"))
        except RemoteFileError as exc:
            if exc.status in (404, 410):
                continue
            raise
        names = list(known) or [n for n in sums if _wanted(n, wiki, date, split)]
        files = []
        for n in names:
            f = known.get(n) or RemoteFile(n, (f"{folder}/{n}",))
            if not f.digests:
                if n not in sums:
                    raise FetchError(f"{folder}/{name} lists no checksum for {n}")
                f = RemoteFile(f.name, f.urls, f.bytes, {algorithm: sums[n]}, name)
            files.append(f)
        return files
    sums = f"{wiki}-{date}-sha1sums.txt nor -md5sums.txt"
    if missing_status is not None:
        raise FetchError(f"{missing_status}; nor {sums} there: no dump to fetch and verify")
    raise FetchError(f"{folder}: neither {sums} is published: nothing to verify the dump against")


def latest_date(
    fetcher: HttpFetcher, wiki: str, *, base_url: str = WIKIMEDIA_DUMPS, split: bool = False
) -> str:
    """The newest date in ``BASE/WIKI/`` whose multistream job is done (dates still running are skipped).

    Raises:
        FetchError: none of the newest eight dates is complete.
    """
    base_url = base_url.rstrip("/")
    index_url = f"{base_url}/{wiki}/"
    dates = sorted(set(_DATE_LINK.findall(fetcher.get_text(index_url))), reverse=True)
    seen = []
    for date in dates[:8]:
        status_url = f"{base_url}/{wiki}/{date}/dumpstatus.json"
        try:
            status = _json(fetcher, status_url)
            name, job = _job(status, split, status_url)
        except (RemoteFileError, FetchError) as exc:
            seen.append(f"{date}: {exc}")
            continue
        if job.get("status") == "done":
            return date
        seen.append(f"{date}: {name} is {job.get('status')!r}")
    raise FetchError(
        f"no complete multistream dump of {wiki} among the newest dates at {index_url}"
        + ("".join(f"\n  {s}" for s in seen) if seen else " (no dates listed)")
    )


def _json(fetcher: HttpFetcher, url: str) -> dict:
    try:
        data = json.loads(fetcher.get_bytes(url))
    except ValueError as exc:
        raise FetchError(f"{url}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise FetchError(f"{url}: expected a JSON object")
    return data
