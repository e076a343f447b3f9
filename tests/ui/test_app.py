"""The UI app over HTTP without a browser: exact observations, ranks, paging/sort/filters, history marks,
escaping in the served HTML, mounting under a prefix, the CLI."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from markupsafe import escape

from sws.ui import create_app
from sws.ui.app import SECURITY_HEADERS
from sws.ui.episode import history_marks, link_segments, open_href
from sws.ui.runs import TableQuery, sort_rows
from tests.ui.helpers import EVIL_ANSWER, EVIL_PAGE_ID, EVIL_QUESTION, synthetic_run


@pytest.fixture(scope="module")
def client(ui_app):
    with TestClient(ui_app) as c:
        yield c


class Tags(HTMLParser):
    """Every start tag with its attributes, as a browser's parser sees them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def pre_text(page: str, css_class: str) -> str:
    """The text of the first ``<pre class="... css_class ...">`` (unescaped)."""
    match = re.search(rf'<pre class="[^"]*\b{css_class}\b[^"]*">(.*?)</pre>', page, re.DOTALL)
    assert match, f"no <pre class={css_class}>"
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))


@pytest.mark.parametrize(
    "args",
    [
        {"query": "Gunpowder Incident Williamsburg", "top_k": 5, "only_title": False, "method": "rrf"},
        {"query": "hotel", "top_k": 3, "only_title": True, "method": "keywords"},
        {"query": "bridge over a river", "top_k": 4, "only_title": False, "method": "vector"},
        {"query": "x", "top_k": 4, "only_title": False, "method": "bogus"},  # the error observation
    ],
)
def test_search_shows_the_exact_observation(client, ui_tools, args):
    params = {"q": args["query"], "method": args["method"], "top_k": args["top_k"]}
    if args["only_title"]:
        params["only_title"] = "1"
    page = client.get("/search", params=params)
    assert page.status_code == 200
    assert pre_text(page.text, "observation-text") == ui_tools.call_tool("search", json.dumps(args))


def test_rrf_hits_show_the_rank_in_each_list(client, ui_engine):
    page = client.get("/search", params={"q": "Gunpowder Incident Williamsburg", "top_k": 5}).text
    hits = ui_engine.search("Gunpowder Incident Williamsburg", 5, "rrf")
    shown_text = re.findall(r'class="rank rank-text"[^>]*>keywords ([^<]+)<', page)
    shown_vector = re.findall(r'class="rank rank-vector"[^>]*>vector ([^<]+)<', page)
    assert shown_text == [f"#{h.text_rank}" if h.text_rank else "–" for h in hits]
    assert shown_vector == [f"#{h.vector_rank}" if h.vector_rank else "–" for h in hits]
    assert any(h.source == "both" for h in hits) and "source-both" in page


def test_open_chunk_and_article_views(client, ui_tools):
    url = "https://en.wikipedia.org/wiki/Odanad#chunk-2"
    page = client.get("/open", params={"url": url}).text
    assert pre_text(page, "observation-text") == ui_tools.call_tool("open_url", json.dumps({"url": url}))
    assert "Chunk view" in page and 'class="prev"' in page and 'class="next"' in page
    article = re.search(r'class="article-link" href="([^"]+)"', page).group(1)
    whole = client.get(html.unescape(article)).text
    assert "Article view" in whole
    assert pre_text(whole, "observation-text").startswith("# Odanad (ID: ")
    bad = client.get("/open", params={"url": "javascript:alert(1)"}).text
    assert "Invalid Wikipedia URL" in pre_text(bad, "observation-text")


def test_runs_overview_has_the_papers_numbers(client, ui_runs):
    from sws.eval.report import run_stats

    page = client.get("/runs").text
    stats = run_stats(ui_runs["heuristic"])
    card = page[page.index('data-run="hotpot-heuristic"') :]
    assert f'<dd class="stat-f1">{100 * stats.f1:.2f}</dd>' in card
    assert f'<dd class="stat-submit">{100 * stats.submit_rate:.2f}</dd>' in card
    assert "full_test: F1 and LLM-judge accuracy (%)" in page  # the report's tables
    assert "errored" in card
    # no judge ran: the card and the report's table say so instead of a 0.00 that reads as measured
    assert stats.judge is None
    assert (
        '<dd class="stat-judge"><span title="no judge verdicts recorded">n/a (no judge)</span></dd>' in card
    )
    assert '<td class="num">n/a (no judge)</td>' in page


def test_card_numbers_are_run_stats(ui_app, ui_runs, tmp_path):
    from sws.eval.report import run_stats

    store = ui_app.state.runs
    for run in store.runs:
        assert store.summary(run).stats == run_stats(run.path), run.key
    big = synthetic_run(tmp_path / "big", 300)
    (run,) = type(store)([big]).runs
    assert type(store)([big]).summary(run).stats == run_stats(big)


def test_table_paging_sorting_filters(tmp_path):
    run = synthetic_run(tmp_path / "big", 600, rows_per_part=100)
    synthetic_run(tmp_path / "small", 30, dataset="MuSiQue", seed=1)
    with TestClient(create_app(run_dirs=[tmp_path])) as c:
        first = c.get("/runs/big").text
        assert (
            first.count('class="episode-link"') == 50 and 'page <span class="page-no">1</span> of 12' in first
        )
        last = c.get("/runs/big", params={"page": 99}).text  # clamped to the last page
        assert last.count('class="episode-link"') == 50 and '<span class="page-no">12</span>' in last
        by_f1 = c.get("/runs/big", params={"sort": "f1", "order": "desc", "per_page": 500}).text
        f1s = [float(v) for v in re.findall(r'class="num col-f1">([0-9.]+)<', by_f1)]
        assert f1s == sorted(f1s, reverse=True) and f1s[0] == 1.0
        failed = c.get("/runs/big", params={"failed": 1, "per_page": 500}).text
        statuses = re.findall(r'<tr class="status-(\w+)"', failed)
        assert statuses and set(statuses) == {"error"}
        both = c.get("/runs/all", params={"dataset": "MuSiQue", "per_page": 500}).text
        assert both.count('class="episode-link"') == 30
        zero = c.get("/runs/all", params={"f1_zero": 1, "not_submitted": 1, "per_page": 500}).text
        assert set(re.findall(r'<tr class="status-(\w+)"', zero)) <= {"error", "max_rounds"}
    from sws.eval.results import load_table

    assert load_table(run, ["id"]).num_rows == 600


def test_table_query_and_sort_rules():
    q = TableQuery.parse(
        {"sort": "rm -rf", "order": "sideways", "page": "-3", "per_page": "99999", "failed": "on"}
    )
    assert (q.sort, q.order, q.page, q.per_page, q.failed) == ("index", "asc", 1, 500, True)
    rows = [{"f1": 0.5}, {"f1": None}, {"f1": 1.0}, {"f1": float("nan")}, {"f1": 0.0}]
    assert [r["f1"] for r in sort_rows(rows, "f1", True)][:3] == [1.0, 0.5, 0.0]
    assert [r["f1"] for r in sort_rows(rows, "f1", False)][:3] == [0.0, 0.5, 1.0]  # missing values last
    assert [r["q"] for r in sort_rows([{"q": "b"}, {"q": "A"}, {"q": "c"}], "q", False)] == ["A", "b", "c"]


def test_history_marks_follow_compress_history():
    from sws.agent.history import compress_history

    big, small = "x" * 3000, "y" * 10
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}, {"id": "b"}]},  # round 1
        {"role": "tool", "tool_call_id": "a", "content": big},  # 3: cut already in round 2 (b is newer)
        {"role": "tool", "tool_call_id": "b", "content": big},  # 4: whole in round 2, cut from round 3
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]},  # round 2
        {"role": "tool", "tool_call_id": "c", "content": small},  # 6: short: never cut
        {"role": "assistant", "content": "", "tool_calls": [{"id": "d"}]},  # round 3
        {"role": "tool", "tool_call_id": "d", "content": big},  # 8: no LLM call after it
    ]
    marks = history_marks(messages, keep_recent=1, max_chars=2048)
    assert (marks[3].full_rounds, marks[3].cut_rounds) == ((), (2, 3))
    assert (marks[4].full_rounds, marks[4].cut_rounds) == ((2,), (3,))
    assert (marks[6].full_rounds, marks[6].cut_rounds) == ((3,), ())
    assert not marks[8].seen and marks[4].removed == 952
    # the same verdicts as the real compression of each request
    for round_no, j in ((2, 5), (3, 7)):
        request = compress_history(messages[:j], 1, 2048)
        for i in (3, 4):
            if j > i:
                assert (request[i]["content"] != big) == (round_no in marks[i].cut_rounds)
    assert history_marks(messages, keep_recent=2)[3].cut_rounds == (3,)


def test_links_only_to_playground_views():
    text = "see [A](https://en.wikipedia.org/wiki/12#chunk-2) or javascript:alert(1) or http://x.org/y"
    parts = link_segments(text, lambda url: open_href("/r", url))
    links = [p for p in parts if p.href]
    assert [p.text for p in links] == ["https://en.wikipedia.org/wiki/12#chunk-2"]
    assert links[0].href == "/r/open?url=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2F12%23chunk-2"
    assert "".join(p.text for p in parts) == text
    assert open_href("", "javascript:window.x=1//https://en.wikipedia.org/wiki/1") is None
    head = link_segments(text, lambda url: open_href("", url), 0, 20)  # a URL cut by the history boundary
    assert "".join(p.text for p in head) == text[:20] and head[-1].href


def test_served_html_never_carries_markup_from_content(client, ui_runs):
    pages = {
        "search": client.get(
            "/search", params={"q": "Evil page tests the viewer", "method": "keywords"}
        ).text,
        "chunk": client.get(
            "/open", params={"url": f"https://en.wikipedia.org/wiki/{EVIL_PAGE_ID}#chunk-1"}
        ).text,
        "article": client.get("/open", params={"url": f"https://en.wikipedia.org/wiki/{EVIL_PAGE_ID}"}).text,
        "table": client.get("/runs/all", params={"per_page": 500}).text,
        "episode": client.get("/runs/popqa-evil/episode", params={"id": "evil-<script>1"}).text,
        "runs": client.get("/runs").text,
        "charts": client.get("/charts").text,
    }
    for name, page in pages.items():
        tags = Tags()
        tags.feed(page)
        assert not {"script", "img", "iframe", "object", "embed"} & {t for t, _ in tags.found}, name
        assert not [a for _, attrs in tags.found for a, _ in attrs if a.startswith("on")], name
        hrefs = [v or "" for _, attrs in tags.found for a, v in attrs if a in ("href", "src", "action")]
        assert hrefs and all(h.startswith(("/", "http://testserver/")) for h in hrefs), (name, hrefs)
    assert "&lt;script&gt;window.__pwned=1" in pages["chunk"]
    assert str(escape(EVIL_QUESTION)) in pages["episode"] and str(escape(EVIL_ANSWER)) in pages["episode"]
    assert "&lt;img src=x onerror=window.__pwned=1;alert(8)&gt;" in pages["search"]


def test_security_headers_and_404(client):
    page = client.get("/runs")
    assert "script-src" not in page.headers["content-security-policy"]  # default-src 'none': no scripts
    assert page.headers["x-content-type-options"] == "nosniff"
    assert client.get("/runs/no-such-run").status_code == 404
    assert client.get("/runs/hotpot-heuristic/episode", params={"id": "nope"}).status_code == 404
    assert client.get("/static/app.css").status_code == 200


def test_error_pages_carry_the_security_headers(tmp_path):
    app = create_app(run_dirs=[synthetic_run(tmp_path / "run", 3)])

    @app.get("/boom")
    def boom():
        raise RuntimeError("a bug")

    with TestClient(app) as c:
        for path, status in [("/boom", 500), ("/nope", 404), ("/runs/nope", 404), ("/static/nope.css", 404)]:
            page = c.get(path)
            assert page.status_code == status, path
            assert {k: page.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS, path
        assert "a bug" not in c.get("/boom").text  # no internals on the page


def test_a_damaged_run_is_listed_and_the_others_still_show(tmp_path):
    from sws.eval.results import DamagedPartError, part_files, read_part

    synthetic_run(tmp_path / "good", 30)
    bad = synthetic_run(tmp_path / "bad", 20, dataset="MuSiQue", rows_per_part=8)
    part = part_files(bad)[1]
    part.write_bytes(part.read_bytes()[:-100])  # truncated
    with pytest.raises(DamagedPartError) as caught:
        read_part(part)
    with TestClient(create_app(run_dirs=[tmp_path])) as c:
        pages = {path: c.get(path) for path in ("/runs", "/runs/all", "/charts", "/runs/bad")}
        for path, page in pages.items():
            assert page.status_code == 200, path
            assert page.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
        damage = str(escape(f"parts/{part.name}: {caught.value.reason}"))
        for path in ("/runs", "/runs/bad"):
            assert pages[path].text.count('class="note damaged"') == 1 and damage in pages[path].text, path
        assert (
            'data-run="good"' in pages["/runs"].text and "| synthetic-model | 30 |" not in pages["/runs"].text
        )
        assert c.get("/runs/all", params={"per_page": 500}).text.count('class="episode-link"') == 30
        assert (
            "MuSiQue" not in pages["/charts"].text.split("</form>")[1]
            and "30 episodes" in pages["/charts"].text
        )


def damaged_run_pages(client):
    """The pages a damaged run (``bad``) must not break, each answered 200, and its card's text on ``/runs``
    and ``/runs/bad``."""
    pages = {path: client.get(path) for path in ("/runs", "/runs/all", "/charts", "/runs/bad")}
    for path, page in pages.items():
        assert page.status_code == 200, path
    cards = {
        p: pages[p].text.split('class="note damaged">')[1].split("</p>")[0] for p in ("/runs", "/runs/bad")
    }
    return pages, cards


@pytest.mark.parametrize(
    "kind, reason",
    [("f1 as strings", "column f1 is string, not double"), ("corpus", "not a results part (no column id)")],
)
def test_a_part_of_another_schema_is_a_damaged_card(tmp_path, kind, reason):
    """The issue: a part whose ``f1`` holds strings answered 500 on /runs, /runs/all and /charts (every run
    hidden); a corpus Parquet in ``parts/`` was a phantom episode. Either is the run's Damaged card, no rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sws.corpus.schema import DOCS
    from sws.eval.results import part_files

    synthetic_run(tmp_path / "good", 30)
    bad = synthetic_run(tmp_path / "bad", 2, dataset="MuSiQue")
    if kind == "corpus":
        table = pa.Table.from_pylist([{"page_id": 1, "title": "T", "markdown": "M"}], schema=DOCS)
    else:
        table = pq.read_table(part_files(bad)[0])
        table = table.set_column(table.schema.get_field_index("f1"), "f1", pa.array(["1.0", "0.5"]))
    part = bad / "parts" / "part-other-00000.parquet"
    pq.write_table(table, part)
    with TestClient(create_app(run_dirs=[tmp_path])) as c:
        pages, cards = damaged_run_pages(c)
        for path, card in cards.items():
            assert str(escape(f"parts/{part.name}: {reason}")) in card, path
        assert c.get("/runs/all", params={"per_page": 500}).text.count('class="episode-link"') == 30
        assert "30 episodes" in pages["/charts"].text


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"items": "abc"}, "items: Input should be a valid integer"),
        ({"model": ["x"]}, "model: Input should be a valid string"),
        ("{not json", "JSONDecodeError: "),
    ],
)
def test_a_mistyped_run_json_is_listed_as_damaged(tmp_path, change, reason):
    """The issue's ``"items": "abc"`` / ``"model": ["x"]`` answered 500 on /runs, /runs/all and /charts."""
    synthetic_run(tmp_path / "good", 30)
    bad = synthetic_run(tmp_path / "bad", 20, dataset="MuSiQue")
    run = json.loads((bad / "run.json").read_text())
    (bad / "run.json").write_text(change if isinstance(change, str) else json.dumps({**run, **change}))
    with TestClient(create_app(run_dirs=[tmp_path])) as c:
        pages, cards = damaged_run_pages(c)
        for path, card in cards.items():
            assert pages[path].text.count('class="note damaged"') == 1, path
            assert (
                str(escape(f"run.json: {reason}")) in card
                and "until its <code>run.json</code> is fixed" in card
            )
        assert 'data-run="good"' in pages["/runs"].text and "30 episodes" in pages["/charts"].text
        assert c.get("/runs/all", params={"per_page": 500}).text.count('class="episode-link"') == 30


def test_mountable_under_a_prefix(ui_tools, ui_runs):
    parent = FastAPI()
    parent.mount("/ui", create_app(run_dirs=[ui_runs["root"]], tools=ui_tools))
    with TestClient(parent) as c:
        page = c.get("/ui/search", params={"q": "Odanad", "top_k": 2}).text
        assert 'href="/ui/static/app.css"' in page and 'href="/ui/open?url=' in page
        assert c.get("/ui/static/app.css").status_code == 200
        table = c.get("/ui/runs/all").text
        link = html.unescape(re.search(r'class="episode-link" href="([^"]+)"', table).group(1))
        assert link.startswith("/ui/runs/") and c.get(link).status_code == 200
        assert c.get("/ui/", follow_redirects=False).headers["location"] == "/ui/search"


def test_cli(monkeypatch, ui_runs):
    import uvicorn
    from click.testing import CliRunner

    from sws.cli.ui import ui_command

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    result = CliRunner().invoke(ui_command, ["--runs", str(ui_runs["root"]), "--port", "9999"])
    assert result.exit_code == 0, result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 9999)
    assert len(served["app"].state.runs.runs) == 3 and served["app"].state.tools is None
    assert CliRunner().invoke(ui_command, []).exit_code == 2  # neither --index nor --runs


def test_chart_geometry():
    from sws.ui.charts import MAX_BINS, bar_chart, histogram, nice_max, tool_use_charts

    assert [nice_max(v) for v in (0, 0.7, 3, 7, 12, 26)] == [1.0, 1.0, 5, 10, 20, 50]
    h = histogram("Rounds", [1, 1, 3], "rounds", high=4)
    assert [b.label for b in h.bars] == ["0: 0", "1: 2", "2: 0", "3: 1", "4: 0"]
    assert [t.text for t in h.y_ticks] == ["0", "1", "2", "3", "4", "5"]  # counts: whole-number ticks
    tall = h.bars[1]
    assert tall.y + tall.h == h.plot[3] and abs(tall.h - 0.4 * (h.plot[3] - h.plot[1])) < 0.01
    wide = histogram("Rounds", list(range(100)), "rounds")
    assert len(wide.bars) == MAX_BINS and wide.bars[-1].label == f"{MAX_BINS - 1}+: {100 - MAX_BINS + 1}"
    grouped = bar_chart("m", ["a", "b"], [("x", [1, 2]), ("y", [3, 4])])
    assert len(grouped.bars) == 4 and len(grouped.legend) == 2
    rows = [
        {"dataset": d, "rounds": r, "search_calls": 1, "open_calls": 0}
        for d, r in (("A", 2), ("B", 4), ("A", 6))
    ]
    overview, per_dataset = tool_use_charts(rows)
    assert [b.label for b in overview[0].bars][:2] == ["A, Rounds: 4", "A, Search calls: 1"]
    assert [d for d, _ in per_dataset] == ["A", "B"] and len(per_dataset[0][1][0].bars) == 7  # shared 0..6
