"""End to end in headless Chromium (Debian's, driven by Playwright) against the UI served on 127.0.0.1 over
an index of a real dump sample and runs produced by the agent against the scripted LLM server.

Every view is screenshotted into the artifacts folder. Contexts bypass the Content-Security-Policy, so the
XSS checks test escaping alone, not the CSP behind it.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.ui.helpers import EVIL_ANSWER, EVIL_PAGE_ID, EVIL_QUESTION, EVIL_TITLE


def shot(watched, artifacts, name: str) -> None:
    path = artifacts / f"{name}.png"
    watched.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000


def clean(watched) -> None:
    """Nothing ran that should not have: no dialog, no page error, the payloads' flag never set."""
    assert watched.dialogs == [], watched.dialogs
    assert watched.errors == [], watched.errors
    assert watched.page.evaluate("typeof window.__pwned") == "undefined"


def test_search_then_chunk_then_article(ui_server, watched, artifacts, ui_tools):
    page = watched.page
    page.goto(f"{ui_server.url}/search")
    page.fill("input[name=q]", "Gunpowder Incident Williamsburg militia")
    page.select_option("select[name=method]", "rrf")
    page.fill("input[name=top_k]", "5")
    page.click("button[type=submit]")
    page.wait_for_selector("li.hit")
    hits = page.locator("li.hit")
    assert hits.count() == 5
    args = {
        "query": "Gunpowder Incident Williamsburg militia",
        "top_k": 5,
        "only_title": False,
        "method": "rrf",
    }
    assert page.text_content("pre.observation-text") == ui_tools.call_tool("search", json.dumps(args))
    first = hits.first
    assert first.locator(".rank-text").inner_text().startswith("keywords #")
    assert first.locator(".rank-vector").inner_text().startswith("vector #")
    title = first.locator("a.hit-title").inner_text()
    shot(watched, artifacts, "01-search")

    first.locator("a.hit-title").click()
    page.wait_for_selector(".view-kind")
    assert page.inner_text(".view-kind") == "Chunk view"
    observation = page.text_content("pre.observation-text")
    assert re.match(rf"# {re.escape(title)} \(chunk 1/\d+\)\n", observation)
    shot(watched, artifacts, "02-chunk")

    page.click("a.article-link")
    page.wait_for_selector(".view-kind >> text=Article view")
    observation = page.text_content("pre.observation-text")
    assert re.match(rf"# {re.escape(title)} \(ID: \d+\)\n", observation)
    shot(watched, artifacts, "03-article")
    clean(watched)


def test_runs_table_loads_sorts_and_filters(ui_server, watched, artifacts):
    page = watched.page
    page.goto(f"{ui_server.url}/runs")
    assert page.locator("section.card").count() == 3
    assert page.locator("table.grid").count() >= 2  # the paper's score and tool-use tables
    shot(watched, artifacts, "04-runs")

    page.click("text=All episodes of all runs")
    rows = page.locator("table.episodes tbody tr")
    assert rows.count() == 14  # 10 + 3 + 1 episodes

    def column(name: str) -> list[str]:
        return page.locator(f"table.episodes tbody td.col-{name}").all_inner_texts()

    page.click("th[data-col=rounds] a.sort")
    page.wait_for_selector("th[data-col=rounds][aria-sort=ascending]")
    rounds = [int(v) for v in column("rounds")]
    assert rounds == sorted(rounds)
    page.click("th[data-col=rounds] a.sort")
    page.wait_for_selector("th[data-col=rounds][aria-sort=descending]")
    rounds = [int(v) for v in column("rounds")]
    assert rounds == sorted(rounds, reverse=True) and rounds[0] == 5
    shot(watched, artifacts, "05-table-sorted")

    page.check("input[name=failed]")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("input[name=failed]:checked")
    statuses = column("status")
    assert statuses and all(s.startswith("error") for s in statuses)
    page.uncheck("input[name=failed]")
    page.select_option("select[name=dataset]", "Bamboogle")
    page.check("input[name=not_submitted]")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("select[name=dataset] >> option[selected] >> text=Bamboogle", state="attached")
    assert column("dataset") == ["Bamboogle"] * 3
    assert set(column("status")) == {"max_rounds"}
    page.uncheck("input[name=not_submitted]")
    page.select_option("select[name=dataset]", "")
    page.check("input[name=f1_zero]")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("input[name=f1_zero]:checked")
    f1s = column("f1")
    assert f1s and all(v in ("0.000", "–") for v in f1s)
    assert page.locator("th[data-col=rounds][aria-sort=descending]").count() == 1  # the sort was kept
    shot(watched, artifacts, "06-table-filtered")
    clean(watched)


def test_episode_page_shows_every_step(ui_server, watched, artifacts, ui_runs):
    from sws.eval.results import load_records

    record = next(r for r in load_records(ui_runs["heuristic"]) if r.id == "h01")
    page = watched.page
    page.goto(f"{ui_server.url}/runs/hotpot-heuristic")
    page.click("a.episode-link >> text=h01")
    page.wait_for_selector("ol.steps")
    steps = page.locator("ol.steps > li.step")
    assert steps.count() == sum(m["role"] != "tool" for m in record.messages)
    assert page.locator("li.step-assistant").count() == record.rounds == 3
    calls = page.locator("div.call")
    assert calls.count() == sum(len(m.get("tool_calls") or []) for m in record.messages)
    assert calls.locator("details.observation").count() == calls.count()  # every call has its observation
    assert page.locator("details.reasoning").count() == 3
    tool_names = page.locator("div.call .badge.tool").all_inner_texts()
    assert tool_names == ["search", "open_url", "submit_answer"]
    assert page.inner_text(".prediction") == record.predicted_answer
    assert page.locator("ul.candidates li.match").count() >= 1

    search_obs = calls.nth(0).locator("details.observation")
    assert "cut to 2,048 chars from round 3" in search_obs.locator("summary").inner_text()
    search_obs.locator("summary").click()  # expand
    assert search_obs.locator("span.cut-text").is_visible() and search_obs.locator(".cut-marker").is_visible()
    assert "never sent to the model" in calls.nth(2).locator("summary").inner_text()
    shot(watched, artifacts, "07-episode")

    search_obs.locator("a.obs-link").first.click()  # an observation URL opens the playground's view
    page.wait_for_selector(".view-kind >> text=Chunk view")
    page.go_back()
    page.locator("a.playground-link >> text=run in playground").first.click()
    page.wait_for_selector("li.hit")
    assert page.input_value("input[name=q]") == record.question
    clean(watched)


def test_charts_render(ui_server, watched, artifacts):
    page = watched.page
    page.goto(f"{ui_server.url}/charts")
    charts = page.locator("svg.chart")
    assert charts.count() == 1 + 3 * 3  # the means chart, then rounds/search/open per dataset
    box = charts.first.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150
    heights = page.locator("svg.chart rect.bar").evaluate_all("els => els.map(e => e.getBBox().height)")
    assert sum(h > 0 for h in heights) >= 10
    assert page.locator("section.dataset h2").all_inner_texts() == ["Bamboogle", "HotpotQA", "PopQA"]
    shot(watched, artifacts, "08-charts")
    clean(watched)


@pytest.mark.parametrize(
    "path",
    [
        "/search?q=Evil+page+tests+the+viewer&method=keywords",
        f"/open?url=https://en.wikipedia.org/wiki/{EVIL_PAGE_ID}%23chunk-1",
        f"/open?url=https://en.wikipedia.org/wiki/{EVIL_PAGE_ID}",
        "/runs/popqa-evil/episode?id=evil-%3Cscript%3E1",
        "/runs/all?per_page=500",
        "/runs",
    ],
)
def test_content_markup_renders_as_text(ui_server, watched, artifacts, path):
    page = watched.page
    page.goto(f"{ui_server.url}{path}")
    for details in page.locator("details").all():  # expand everything, hover every link
        details.evaluate("d => d.open = true")
    for link in page.locator("main a").all()[:60]:
        link.hover()
    assert page.locator("main script, main img, main iframe, main object, main embed").count() == 0
    bad = page.evaluate(
        """() => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
              .filter(a => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value))
              .map(a => e.tagName + ' ' + a.name + '=' + a.value))"""
    )
    assert bad == []
    text = page.inner_text("main")
    if "episode" in path:
        assert EVIL_QUESTION in text and EVIL_ANSWER in text and "javascript:window.__pwned=1" in text
    elif path.startswith("/search"):
        assert EVIL_TITLE in text
    elif path.startswith("/open"):
        assert EVIL_TITLE in text and "<script>window.__pwned=1;alert(1)</script>" in text
    elif path.startswith("/runs/all"):
        assert EVIL_QUESTION in text
    page.wait_for_timeout(300)  # give any injected handler a chance to fire
    clean(watched)
    name = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")[:60]
    shot(watched, artifacts, f"xss-{name}")
