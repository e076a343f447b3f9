"""A heavy fixture's start deadline (``tests/startup.py``): a start past it fails saying what was slow, and
what it started is ended."""

from __future__ import annotations

import pytest

from tests import startup

# stands in for ``python -m sws.cli.serve`` (the child's working directory comes first on its path): it logs
# the step it is at, then never prints the ready line
SLOW_SERVE = "import sys, time\nprint('loading the index', file=sys.stderr, flush=True)\ntime.sleep(600)\n"


def test_a_start_past_its_deadline_fails_naming_the_step_it_was_at(tmp_path, monkeypatch):
    for package in ("sws", "sws/cli"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "sws" / "cli" / "serve.py").write_text(SLOW_SERVE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(startup.MEASURED_S, "a slow serve", 1.5)  # 6 s or more: its log line is written
    server = startup.RegisteredServe(tmp_path, kind="a slow serve", log_path=tmp_path / "serve.log")
    with pytest.raises(pytest.fail.Exception) as failed:
        server.start()
    budget = startup.budget_s("a slow serve")
    assert str(failed.value).startswith(
        f"a slow serve was not ready within {budget:.0f} s (4 × the longer of"
    )
    assert f"slow at its log's last line: 'loading the index'; log: {tmp_path / 'serve.log'}" in str(
        failed.value
    )
    assert server.process.poll() is not None  # stopped
