"""Typed errors of the fetchers: each names the URL or file at fault."""


class FetchError(RuntimeError):
    """A download that cannot be done (network gave up, no complete dump, unreadable status file)."""


class RemoteFileError(FetchError):
    """The server refuses a file for good: 404/410 (not there) or 401/403 (no permission).

    Args:
        url: the URL asked for.
        status: the HTTP status code.
        reason: the server's reason phrase.
    """

    def __init__(self, url: str, status: int, reason: str = "") -> None:
        self.url, self.status = url, status
        if status in (404, 410):
            hint = "no such file there (check the wiki, date, dataset name or mirror)"
        elif status in (401, 403):
            hint = "permission denied (the file is not public, or the mirror refuses this client)"
        else:
            hint = "the server refused the request"
        super().__init__(f"HTTP {status} {reason} for {url}: {hint}".replace("  ", " "))


class ChecksumError(FetchError):
    """A downloaded (or already present) file whose size or checksum differs from the published one."""


class FetchManifestError(ValueError):
    """A fetch-manifest.json that is missing, unreadable, or does not list a file it is asked about."""
