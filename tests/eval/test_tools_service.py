"""``sws eval --tools-url``: the environment fingerprint is the served index's, read from ``/info`` with the
bearer token; a service that refuses the token, tells no fingerprint or cannot be reached is refused before
any episode runs (``--unverified-tools`` runs anyway, recorded as such). The retrieval service's real HTTP app
over the leads index, served by uvicorn on 127.0.0.1."""

import contextlib
import json
import socket

import pytest
from click.testing import CliRunner

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.cli import cli
from sws.eval.results import load_table
from sws.eval.run_meta import read_run_meta
from sws.index.manifest import read_manifest
from tests.ui.helpers import ServedApp

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_local")]
BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"
TOKEN = "eval-token-5d2e"


@pytest.fixture(scope="module")
def engine(leads_root):
    from sws.search import SearchEngine

    return SearchEngine.open(leads_root / "index")


@contextlib.contextmanager
def served(engine, info):
    """The retrieval service's HTTP app (bearer token ``TOKEN``) telling ``info`` on ``/info``; its URL."""
    service = RetrievalService(engine, info=info)
    try:
        with ServedApp(make_http_app(service, token=TOKEN)) as app:
            yield app.url
    finally:
        service.close()


def evaluate(url, out, *extra):
    args = ["eval", "--dataset", "Bamboogle", "--data", BAMBOOGLE, "--limit", "2", "--tools-url", url]
    return CliRunner().invoke(cli, [*args, "--out", str(out), "eval.workers=1", *extra])


def last_line(result):
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output  # no traceback
    return result.output.strip().splitlines()[-1]


QUERY_EMBEDDING = {"model": "all-MiniLM-L6-v2", "runtime": "openvino", "precision": "bf16"}


def test_the_fingerprint_is_the_served_indexs(engine, leads_root, tmp_path, monkeypatch):
    """The issue: /info was read without the token (401), every run's fingerprint was "unknown", and runs
    against two different indexes merged; without the token every episode spent an LLM call, then failed."""
    fingerprint = read_manifest(leads_root / "index")["fingerprint"]
    run = tmp_path / "run"
    with (
        served(engine, {"index": {"fingerprint": fingerprint}, "query_embedding": QUERY_EMBEDDING}) as url,
        served(engine, {"fingerprint": "b"}) as b,
    ):
        monkeypatch.delenv("SWS_SERVE_TOKEN", raising=False)
        refused = last_line(evaluate(url, run))
        assert (
            refused
            == f"Error: {url}/info answered HTTP 401 (missing or wrong bearer token); set $SWS_SERVE_TOKEN"
        )
        assert not run.exists()  # before the first LLM round: nothing ran, nothing was written
        monkeypatch.setenv("SWS_SERVE_TOKEN", TOKEN)
        result = evaluate(url, run)
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output[result.output.index("{") :])
        assert (summary["recorded"], summary["errored"]) == (2, 0)
        assert read_run_meta(run).fingerprint == fingerprint
        assert read_run_meta(run).query_embedding == QUERY_EMBEDDING  # the service's, as /info tells it
        assert set(load_table(run, ["fingerprint"])["fingerprint"].to_pylist()) == {fingerprint}
        other_index = last_line(evaluate(b, run))
        assert f"fingerprint {fingerprint} → b" in other_index and "use a new --out directory" in other_index


def test_a_service_that_tells_no_fingerprint_runs_only_unverified(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("SWS_SERVE_TOKEN", TOKEN)
    run = tmp_path / "run"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there once the socket is closed
    assert last_line(evaluate(closed, run)).startswith(f"Error: cannot reach {closed}/info (ConnectError: ")
    with served(engine, {"index": {}}) as url:
        refused = last_line(evaluate(url, run))
        assert refused == (
            f"Error: {url}/info answered HTTP 200 without an environment fingerprint, so which index it "
            "serves cannot be checked; pass --unverified-tools to run anyway (recorded as fingerprint "
            '"unverified")'
        )
        assert not run.exists()
        result = evaluate(url, run, "--unverified-tools")
    assert result.exit_code == 0, result.output
    warning = f"warning: {url}/info answered HTTP 200 without an environment fingerprint; the run is recorded"
    assert f'{warning} as fingerprint "unverified"' in result.output
    assert read_run_meta(run).fingerprint == "unverified"


def test_an_info_that_trickles_is_cut_at_the_deadline(tmp_path):
    """A total deadline, not one per read: an ``/info`` sent a byte every 0.5 s (each read in time) does not
    complete within 1 s."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from sws.agent.scripted_server import drip

    app = FastAPI()
    app.get("/info")(lambda: drip(JSONResponse({"index": {"fingerprint": "f" * 32}}), 0.5))
    with ServedApp(app) as served_app:
        refused = last_line(evaluate(served_app.url, tmp_path / "run", "tools.timeout_s=1"))
    assert refused.startswith(
        f"Error: no complete answer from {served_app.url}/info within 1 s, so which index"
    )
