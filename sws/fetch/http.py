"""HTTP downloads that survive bad networks: Range resume, retries with backoff, atomic final files.

A file is written to ``NAME.part`` next to its final name and hashed as it arrives; only when its size and
checksum are right is it renamed (atomically) to ``NAME``. A transfer cut in the middle resumes from the
bytes already in ``NAME.part`` with ``Range: bytes=N-``, in the same run (retries) or a later one.
"""

from __future__ import annotations

import logging
import os
import re
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self, TypeVar

import httpx
from tqdm import tqdm

from sws import __version__
from sws.fetch.checksums import choose_algorithm, new_hasher
from sws.fetch.errors import ChecksumError, FetchError, RemoteFileError
from sws.retry import RetryPolicy

logger = logging.getLogger(__name__)

PART_SUFFIX = ".part"
USER_AGENT = f"sws/{__version__} (SimpleWikiSearch fetcher; python-httpx/{httpx.__version__})"
# Worth another try: the server is overloaded or restarting, or a gateway timed out.
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_CONTENT_RANGE = re.compile(r"bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)")

T = TypeVar("T")


class _Transient(Exception):
    """A failed attempt that a retry can fix (a 5xx/429 answer, a refused resume, a short body)."""


def is_transient(exc: BaseException) -> bool:
    """Retried: connection errors, timeouts and cut connections (``httpx.TransportError``), 408/425/429/5xx
    answers and refused resumes. Not retried: 404/403 and other definite refusals, checksum mismatches, and
    TLS certificates that fail verification (waiting does not fix those; the next mirror may)."""
    if not isinstance(exc, (httpx.TransportError, _Transient)):
        return False
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return False
        cause = cause.__cause__ or cause.__context__
    return True


def _check_status(response: httpx.Response, url: str) -> None:
    status = response.status_code
    if status < 400:
        return
    if status in TRANSIENT_STATUS:
        raise _Transient(f"HTTP {status} {response.reason_phrase} for {url}")
    raise RemoteFileError(url, status, response.reason_phrase)


def _content_range(header: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) of a ``Content-Range`` header; None where absent or ``*``."""
    match = _CONTENT_RANGE.match(header or "")
    if not match:
        return None, None
    start = int(match.group(1)) if match.group(1) else None
    total = int(match.group(3)) if match.group(3) != "*" else None
    return start, total


@dataclass(slots=True)
class Download:
    """What :meth:`HttpFetcher.download` did.

    Args:
        path: the final file.
        url: where it came from.
        bytes: its size.
        digests: ``{algorithm: hex}`` computed over the whole file while it was written.
        resumed_from: bytes already in ``.part`` when the call started (0: a fresh download).
        transferred: bytes received over the network by this call.
        seconds: wall time.
    """

    path: Path
    url: str
    bytes: int
    digests: dict[str, str] = field(default_factory=dict)
    resumed_from: int = 0
    transferred: int = 0
    seconds: float = 0.0


class _PartFile:
    """``NAME.part`` with a running hash of its bytes (existing bytes are hashed from disk, not fetched)."""

    def __init__(self, path: Path, algorithm: str, block: int = 1 << 22) -> None:
        self.path, self.algorithm = path, algorithm
        self.hasher = new_hasher(algorithm)
        self.size = 0
        self.received = 0
        if path.is_file():
            with open(path, "rb") as f:
                while chunk := f.read(block):
                    self.hasher.update(chunk)
                    self.size += len(chunk)

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)
        self.hasher = new_hasher(self.algorithm)
        self.size = 0

    def append(self, chunks, bar) -> None:
        with open(self.path, "ab") as f:
            for chunk in chunks:
                f.write(chunk)
                self.hasher.update(chunk)
                self.size += len(chunk)
                self.received += len(chunk)
                bar.update(len(chunk))

    def commit(self, final: Path) -> None:
        with open(self.path, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(self.path, final)


class HttpFetcher:
    """Downloads over HTTP(S) with retries (``sws.retry``), Range resume, progress bars and checksum
    verification.

    Args:
        retries: further attempts after a transient failure (see :func:`is_transient`).
        backoff_s: base of the jittered backoff: the wait before retry ``n`` is at most
            ``backoff_s * 2^(n-1)``, and at most ``max_backoff_s``.
        max_backoff_s: longest wait between attempts.
        timeout_s: connect timeout, and the longest wait for each read of an answer.
        progress: show a progress bar (rate and ETA) per file on stderr.
        user_agent: the User-Agent header (Wikimedia asks for a descriptive one).
    """

    def __init__(
        self,
        *,
        retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        timeout_s: float = 60.0,
        progress: bool = True,
        user_agent: str = USER_AGENT,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.policy = RetryPolicy(timeout_s, retries + 1, backoff_s, max_backoff_s)
        self.progress = progress
        self._client = httpx.Client(
            follow_redirects=True,
            timeout=httpx.Timeout(timeout_s),
            headers={"User-Agent": user_agent, "Accept-Encoding": "identity"},
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _retry(self, url: str, attempt: Callable[[], T]) -> T:
        failed = 0

        def log(exc: BaseException, number: int, wait: float) -> None:
            nonlocal failed
            failed = number
            retries = self.policy.max_attempts - 1
            logger.warning("%s: %s; retry %d/%d in %.1f s", url, exc, number, retries, wait)

        try:
            return self.policy.run(attempt, is_transient, on_retry=log)
        except (httpx.TransportError, _Transient) as exc:
            raise FetchError(f"{url}: gave up after {failed + 1} attempt(s): {exc}") from exc

    def get_bytes(self, url: str) -> bytes:
        """The body of a small file (status pages, checksum lists), with retries."""

        def attempt() -> bytes:
            response = self._client.get(url)
            _check_status(response, url)
            return response.content

        return self._retry(url, attempt)

    def get_text(self, url: str) -> str:
        return self.get_bytes(url).decode("utf-8", errors="replace")

    def remote_size(self, url: str) -> int | None:
        """``Content-Length`` from a HEAD request (redirects followed), or None when the server does not say."""

        def attempt() -> int | None:
            response = self._client.head(url)
            _check_status(response, url)
            length = response.headers.get("content-length")
            return int(length) if length and length.isdigit() else None

        return self._retry(url, attempt)

    def download(
        self,
        url: str,
        dest: str | Path,
        *,
        size: int | None = None,
        expected: Mapping[str, str] | None = None,
    ) -> Download:
        """Fetch ``url`` into ``dest`` (via ``dest.part``), resuming what an earlier attempt left.

        Args:
            url: the file's URL.
            dest: the final path; it appears only once the file is complete and verified.
            size: the published size in bytes, if known.
            expected: published digests ``{"sha1"|"md5"|"sha256": hex}``; the strongest is verified (with
                none, sha256 is computed for the record).

        Raises:
            RemoteFileError: 404/403 and other definite refusals (naming the URL).
            ChecksumError: wrong size or checksum; the bad ``.part`` is deleted so a rerun starts afresh.
            FetchError: transient failures that outlasted the retries; ``.part`` is kept for a later resume
                (resumed only when ``expected`` is given: without a checksum a splice of two versions of a
                file could not be told from the file).
        """
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        expected = {k: v.lower() for k, v in (expected or {}).items() if v}
        algorithm = choose_algorithm(expected)
        part = _PartFile(dest.with_name(dest.name + PART_SUFFIX), algorithm)
        if (size is not None and part.size > size) or (part.size and not expected):
            part.reset()  # resume across runs only what a published checksum will verify
        resumed_from = part.size
        started = time.monotonic()
        bar = tqdm(
            total=size,
            initial=part.size,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=dest.name,
            disable=not self.progress,
            dynamic_ncols=True,
        )
        try:
            self._retry(url, lambda: self._attempt(url, part, size, bar))
        except FetchError as exc:
            if part.size and not isinstance(exc, RemoteFileError):
                raise FetchError(
                    f"{exc} ({part.size:,} bytes kept in {part.path}; run again to resume)"
                ) from exc
            raise
        finally:
            bar.close()
        if size is not None and part.size != size:
            got = part.size
            part.reset()
            raise ChecksumError(
                f"{url}: got {got:,} bytes, the published size is {size:,}; deleted, run again"
            )
        actual = part.hasher.hexdigest()
        if algorithm in expected and actual != expected[algorithm]:
            part.reset()
            raise ChecksumError(
                f"{url}: {algorithm} {actual} does not match the published {expected[algorithm]}; "
                f"the download is corrupt and was deleted, run again"
            )
        part.commit(dest)
        return Download(
            dest, url, part.size, {algorithm: actual}, resumed_from, part.received, time.monotonic() - started
        )

    def _attempt(self, url: str, part: _PartFile, size: int | None, bar) -> None:
        offset = part.size
        if size is not None and offset == size:
            return  # complete already (an earlier run was cut after the last byte)
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        with self._client.stream("GET", url, headers=headers) as response:
            if response.status_code == 416 and offset:
                _, total = _content_range(response.headers.get("content-range"))
                if total == offset and size is None:
                    return
                part.reset()
                bar.reset(total=size)
                raise _Transient(f"{url}: the server refused to resume at byte {offset:,}; starting again")
            _check_status(response, url)
            if offset and response.status_code == 206:
                start, _ = _content_range(response.headers.get("content-range"))
                if start != offset:
                    part.reset()
                    bar.reset(total=size)
                    raise _Transient(f"{url}: asked for bytes from {offset:,}, got a range from {start}")
            elif offset:  # 200: the server ignores Range, so the whole file comes again
                logger.warning("%s: the server does not support resuming; downloading from the start", url)
                part.reset()
                bar.reset(total=size)
            length = response.headers.get("content-length")
            end = part.size + int(length) if length and length.isdigit() else None
            if bar.total is None and end is not None:
                bar.total = end
                bar.refresh()
            part.append(response.iter_raw(), bar)  # as received: a cut loses nothing already read
        if end is not None and part.size < end:
            raise _Transient(f"{url}: the connection closed at byte {part.size:,} of {end:,}")
