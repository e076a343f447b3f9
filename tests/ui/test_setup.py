"""The test setup's Chromium install (apt-get, as root), with apt-get faked."""

from __future__ import annotations

import subprocess

import pytest

from tests.ui.helpers import ChromiumMissing, ensure_chromium


class FakeApt:
    """Answers apt-get calls in turn; an ``install`` that succeeds creates the binary."""

    def __init__(self, path, codes):
        self.path, self.codes, self.calls = path, list(codes), []

    def __call__(self, *args, timeout):
        self.calls.append(args[0])
        code = self.codes.pop(0)
        if args[0] == "install" and code == 0:
            self.path.write_text("#!/bin/sh\n")
        return subprocess.CompletedProcess(["apt-get", *args], code, "", f"E: exit {code}")


@pytest.fixture
def as_root(monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 0)
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")


def test_present_binary_is_used_as_is(tmp_path):
    binary = tmp_path / "chromium"
    binary.write_text("")
    assert ensure_chromium(binary, apt=None) == binary


def test_missing_binary_is_installed_updating_the_lists_once(tmp_path, as_root):
    apt = FakeApt(tmp_path / "chromium", [100, 0, 0])  # install fails (no lists), update, install
    assert ensure_chromium(tmp_path / "chromium", apt=apt).is_file()
    assert apt.calls == ["install", "update", "install"]


def test_failures_say_why(tmp_path, as_root, monkeypatch):
    with pytest.raises(ChromiumMissing, match="apt-get install chromium failed"):
        ensure_chromium(tmp_path / "chromium", apt=FakeApt(tmp_path / "chromium", [100, 0, 100]))
    with pytest.raises(ChromiumMissing, match="apt-get update failed"):
        ensure_chromium(tmp_path / "chromium", apt=FakeApt(tmp_path / "chromium", [100, 100]))
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(ChromiumMissing, match="needs root"):
        ensure_chromium(tmp_path / "chromium", apt=None)
