"""HttpFetcher against a real local server: full download, resume after a cut (in the same run and in the
next), checksum and size refusals, 404, retried 503s, and the .part file never under the final name."""

import hashlib

import pytest

from sws.fetch import ChecksumError, FetchError, HttpFetcher, RemoteFileError
from tests.fetch.conftest import DATE, DUMP

PATH = f"/enwiki/{DATE}/{DUMP}"


def _fetcher(**kw) -> HttpFetcher:
    return HttpFetcher(**({"retries": 2, "backoff_s": 0.0, "progress": False} | kw))


def test_full_download_through_a_redirect_is_verified_and_renamed(server, dump_files, tmp_path):
    body = dump_files[DUMP]
    server.state.redirects["/mirror/dump.bz2"] = PATH  # as Hugging Face's resolve/ URLs redirect to a CDN
    with _fetcher(progress=True) as http:
        done = http.download(
            f"{server.url}/mirror/dump.bz2",
            tmp_path / DUMP,
            size=len(body),
            expected={"md5": "x" * 32, "sha1": hashlib.sha1(body).hexdigest()},
        )
    assert (tmp_path / DUMP).read_bytes() == body
    assert sorted(p.name for p in tmp_path.iterdir()) == [DUMP]
    assert done.digests == {"sha1": hashlib.sha1(body).hexdigest()}  # the strongest published one, only
    assert (done.bytes, done.resumed_from, done.transferred) == (len(body), 0, len(body))
    assert server.state.served[PATH] == len(body)


def test_a_cut_transfer_resumes_from_the_bytes_it_has(server, dump_files, tmp_path):
    body, cut = dump_files[DUMP], 600_000
    server.state.cut_once[PATH] = cut
    with _fetcher() as http:
        done = http.download(
            f"{server.url}{PATH}", tmp_path / DUMP, expected={"sha1": hashlib.sha1(body).hexdigest()}
        )
    assert (tmp_path / DUMP).read_bytes() == body
    assert server.state.ranges(PATH) == [None, f"bytes={cut}-"]
    assert server.state.served[PATH] == len(body)  # nothing before the cut was sent twice
    assert done.transferred == len(body)


def test_a_cut_transfer_resumes_in_the_next_run(server, dump_files, tmp_path):
    body, cut = dump_files[DUMP], 500_000
    server.state.cut_once[PATH] = cut
    sha1 = hashlib.sha1(body).hexdigest()
    with _fetcher(retries=0) as http, pytest.raises(FetchError, match="run again to resume") as err:
        http.download(f"{server.url}{PATH}", tmp_path / DUMP, size=len(body), expected={"sha1": sha1})
    assert f"{server.url}{PATH}" in str(err.value)
    assert not (tmp_path / DUMP).exists()  # partial data never under the final name
    assert (tmp_path / f"{DUMP}.part").stat().st_size == cut
    with _fetcher() as http:
        done = http.download(f"{server.url}{PATH}", tmp_path / DUMP, size=len(body), expected={"sha1": sha1})
    assert (done.resumed_from, done.transferred) == (cut, len(body) - cut)
    assert server.state.ranges(PATH) == [None, f"bytes={cut}-"]
    assert server.state.served[PATH] == len(body)
    assert (tmp_path / DUMP).read_bytes() == body and not (tmp_path / f"{DUMP}.part").exists()


def test_a_corrupt_download_is_refused_and_deleted(server, dump_files, tmp_path):
    body = dump_files[DUMP]
    with _fetcher() as http, pytest.raises(ChecksumError, match="does not match the published") as err:
        http.download(
            f"{server.url}{PATH}", tmp_path / DUMP, expected={"md5": hashlib.md5(b"other").hexdigest()}
        )
    assert hashlib.md5(body).hexdigest() in str(err.value)
    assert list(tmp_path.iterdir()) == []
    with _fetcher() as http, pytest.raises(ChecksumError, match="published size is 99"):
        http.download(f"{server.url}{PATH}", tmp_path / DUMP, size=99)
    assert list(tmp_path.iterdir()) == []


def test_404_names_the_url_and_is_not_retried(server, tmp_path):
    url = f"{server.url}/enwiki/{DATE}/missing.bz2"
    with _fetcher() as http, pytest.raises(RemoteFileError) as err:
        http.download(url, tmp_path / "missing.bz2")
    assert str(err.value).startswith(f"HTTP 404 Not Found for {url}: no such file")
    assert len(server.state.ranges(f"/enwiki/{DATE}/missing.bz2")) == 1
    assert list(tmp_path.iterdir()) == []


def test_transient_errors_are_retried_with_backoff(server, dump_files, tmp_path):
    server.state.fail_times[PATH] = 2
    with _fetcher() as http:
        http.download(f"{server.url}{PATH}", tmp_path / DUMP)
    assert len(server.state.ranges(PATH)) == 3
    server.state.fail_times[PATH] = 3
    with _fetcher() as http, pytest.raises(FetchError, match=r"gave up after 3 attempt\(s\): HTTP 503"):
        http.download(f"{server.url}{PATH}", tmp_path / "again.bz2")


def test_a_leftover_part_is_resumed_only_when_a_checksum_will_verify_it(server, dump_files, tmp_path):
    (tmp_path / f"{DUMP}.part").write_bytes(b"stale bytes of another version")
    with _fetcher() as http:
        done = http.download(f"{server.url}{PATH}", tmp_path / DUMP)
    assert done.resumed_from == 0 and server.state.ranges(PATH) == [None]
    assert (tmp_path / DUMP).read_bytes() == dump_files[DUMP]
    assert done.digests == {"sha256": hashlib.sha256(dump_files[DUMP]).hexdigest()}  # computed for the record


def test_only_errors_that_waiting_can_fix_are_retried():
    import ssl

    import httpx

    from sws.fetch import is_transient

    try:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed")
        except ssl.SSLError as exc:
            raise httpx.ConnectError("TLS handshake") from exc
    except httpx.ConnectError as exc:
        bad_certificate = exc
    assert is_transient(httpx.ReadTimeout("slow")) and is_transient(httpx.RemoteProtocolError("cut"))
    assert not is_transient(bad_certificate)
    assert not is_transient(RemoteFileError("https://x/y", 404, "Not Found"))
