"""``sws ui``'s DNS-rebinding guard: the app the CLI serves answers only its own Host (loopback names, the
bound address, ``--allow-host``) and same-site or loopback Origins (``--allow-origin``); else 403 JSON."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sws.ui.app import SECURITY_HEADERS
from tests.ui.helpers import synthetic_run


@pytest.fixture
def served_app(monkeypatch, tmp_path):
    """``served_app(*cli_args)``: the app ``sws ui --runs RUN ARGS`` hands to uvicorn."""
    import uvicorn
    from click.testing import CliRunner

    from sws.cli.ui import ui_command

    run = synthetic_run(tmp_path / "run", 3)

    def serve(*args: str):
        served = {}
        monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app))
        result = CliRunner().invoke(ui_command, ["--runs", str(run), *args])
        assert result.exit_code == 0, result.output
        return served["app"]

    return serve


def test_a_foreign_host_or_origin_gets_403(served_app):
    with TestClient(served_app(), base_url="http://127.0.0.1:8765") as client:
        for path in ("/runs", "/runs/all", "/charts", "/healthz"):
            assert client.get(path).status_code == 200, path
            for host in ("localhost:8765", "[::1]:8765"):
                headers = {"host": host, "origin": f"http://{host}"}
                assert client.get(path, headers=headers).status_code == 200, (path, host)
            for headers, code in [
                ({"host": "evil.example"}, "host_not_allowed"),
                ({"host": "evil.example:8765", "origin": "http://evil.example:8765"}, "host_not_allowed"),
                ({"origin": "http://evil.example"}, "origin_not_allowed"),
            ]:
                refused = client.get(path, headers=headers)
                assert refused.status_code == 403, (path, headers, refused.text)
                assert (
                    refused.json()["error"]["code"] == code
                    and "--allow-" in refused.json()["error"]["message"]
                )
                assert all(refused.headers[name] == value for name, value in SECURITY_HEADERS.items())


def test_allow_lists(served_app):
    app = served_app(
        "--host", "0.0.0.0", "--allow-host", "ui.example", "--allow-origin", "https://app.example"
    )
    with TestClient(app, base_url="http://ui.example:8765") as client:
        assert client.get("/runs").status_code == 200
        assert client.get("/runs", headers={"origin": "https://app.example"}).status_code == 200
        assert (
            client.get("/runs", headers={"host": "10.0.0.5:8765"}).status_code == 200
        )  # an address of 0.0.0.0
        assert client.get("/runs", headers={"host": "evil.example"}).status_code == 403
