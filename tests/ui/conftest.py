"""Fixtures: Debian's Chromium (installed here if missing), the UI served on 127.0.0.1 over a real index and
runs produced with the scripted LLM server, Playwright pages that record dialogs, and a screenshots folder.

Screenshots go to ``tests/ui/artifacts/`` (ignored by git; ``SWS_UI_ARTIFACTS`` overrides the folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("SWS_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("SWS_UI_ARTIFACTS", Path(__file__).parent / "artifacts"))


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium; installed with apt-get (as root) when missing, else the test run fails saying why."""
    from tests.ui.helpers import ChromiumMissing, ensure_chromium

    try:
        return ensure_chromium(CHROMIUM)
    except ChromiumMissing as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ignore = ARTIFACTS / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    print(f"\nUI screenshots: {ARTIFACTS}")
    return ARTIFACTS


@pytest.fixture(scope="session")
def ui_index(tmp_path_factory, embedder) -> Path:
    from tests.ui.helpers import build_ui_index

    return build_ui_index(tmp_path_factory.mktemp("ui-index"), embedder)


@pytest.fixture(scope="session")
def ui_engine(ui_index, embedder):
    from sws.search import SearchEngine

    return SearchEngine.open(ui_index, embedder=embedder)


@pytest.fixture(scope="session")
def ui_tools(ui_engine):
    from sws.env import WikiTools

    return WikiTools(ui_engine)


@pytest.fixture(scope="session")
def ui_runs(tmp_path_factory, ui_tools) -> dict[str, Path]:
    from tests.ui.helpers import produce_runs

    root = tmp_path_factory.mktemp("ui-runs")
    runs = produce_runs(root, ui_tools)
    return {"root": root, **runs}


@pytest.fixture(scope="session")
def ui_app(ui_tools, ui_runs):
    from sws.ui import create_app

    return create_app(run_dirs=[ui_runs["root"]], tools=ui_tools)


@pytest.fixture(scope="session")
def ui_server(ui_app):
    from tests.ui.helpers import ServedApp

    with ServedApp(ui_app) as served:
        yield served


@pytest.fixture(scope="package")
def browser(chromium):
    """Chromium under Playwright's sync API, whose event loop runs in this thread until it stops: closed
    after tests/ui, so a later test's ``asyncio.run`` is not inside a running loop."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "the browser tests need Playwright's Python package: pip install -e '.[dev]' (playwright==1.65.2)"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS, timeout=120_000)
        try:
            yield browser
        finally:
            browser.close()


class PageWatch:
    """A page plus what it did: dialogs opened (dismissed at once), page errors, console messages."""

    def __init__(self, page):
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


@pytest.fixture
def watched(browser):
    """A fresh context (CSP bypassed, so escaping alone is what is tested) and its watched page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        yield PageWatch(page)
    finally:
        context.close()
