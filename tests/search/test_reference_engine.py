"""``SearchEngine`` over an index in the reference's layout (``sws index import`` of the leads index's export,
inner-product and L2) answers as over the native index: the same hits in the same order for keywords, vector
and rrf over real questions, the same title search, random pages and page lookups, and byte-identical
``open_url`` observations for chunk and article URLs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from sws.env import WikiTools
from sws.index.reference import METRICS
from sws.search import SearchEngine
from tests.index.helpers import lead_pages, reference_index

QA = Path(__file__).parents[1] / "data" / "qa"
QUESTIONS = [
    *(q["question"] for q in json.loads((QA / "bamboogle_test_questions_and_answers.json").read_text())[:25]),
    *(q["question"] for q in json.loads((QA / "hotpotqa_test_questions_and_answers.json").read_text())[:15]),
    "Who founded KickassTorrents?",
    "Which country does Javier Milei lead?",
    "What is a restriction enzyme?",
    '"restriction enzyme" DNA',
    "dog breeds",
]


@pytest.fixture(scope="module")
def engines(leads_root, embedder, tmp_path_factory):
    """metric -> the engine over the imported export; "native" -> the engine over the leads index."""
    engines = {"native": SearchEngine.open(leads_root / "index", embedder=embedder)}
    for metric in METRICS:
        path = reference_index(leads_root, tmp_path_factory.mktemp(f"reference-{metric}"), metric)
        engines[metric] = SearchEngine.open(path, embedder=embedder)
    return engines


def _found(hits):
    return [(h.chunk, h.source, h.text_rank, h.vector_rank) for h in hits]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("method", ["keywords", "vector", "rrf"])
def test_every_method_finds_the_native_hits_in_the_native_order(engines, metric, method):
    native, ref = engines["native"], engines[metric]
    for top_k in (1, 5, 10):
        assert [_found(h) for h in ref.batch_search(QUESTIONS, top_k, method)] == [
            _found(h) for h in native.batch_search(QUESTIONS, top_k, method)
        ]
    found = ref.search(QUESTIONS[-2], 5, method)
    assert found and found[0].chunk.title == "Restriction enzyme"


@pytest.mark.parametrize("metric", METRICS)
def test_keyword_scores_and_inner_product_scores_are_the_native_ones(engines, metric):
    native, ref = engines["native"], engines[metric]
    for query in QUESTIONS:
        ours = [h.score for h in ref.search(query, 10, "keywords")]
        assert ours == pytest.approx([h.score for h in native.search(query, 10, "keywords")], rel=1e-6)
        if metric == "ip":
            ours = [h.score for h in ref.search(query, 10, "vector")]
            assert ours == pytest.approx([h.score for h in native.search(query, 10, "vector")], abs=1e-6)


def test_an_l2_index_ranks_by_ascending_distance(engines, embedder):
    dense = engines["l2"].index.dense
    assert (dense.metric, engines["ip"].index.dense.metric, engines["native"].index.dense.metric) == (
        "l2",
        "ip",
        "ip",
    )
    q = embedder.embed_queries(["Who founded KickassTorrents?"])[0]
    distances = [score for _, score in dense.search(q, 17)]
    assert distances == sorted(distances) and len(distances) == 17
    scores = dict(engines["ip"].index.dense.search(q, 17))
    for row, distance in dense.search(q, 17):  # unit vectors: |q - x|^2 = 2 - 2 q.x
        assert distance == pytest.approx(2 - 2 * scores[row], abs=1e-3)
    assert np.isclose(np.linalg.norm(q), 1)


@pytest.mark.parametrize("metric", METRICS)
def test_open_url_observations_are_byte_identical(engines, metric):
    native, ref = WikiTools(engines["native"]), WikiTools(engines[metric])
    urls = []
    for page in lead_pages():
        base = f"https://en.wikipedia.org/wiki/{page['page_id']}"
        urls += [base, f"{base}#chunk-0", f"{base}#chunk-{len(page['chunks']) + 1}"]
        urls += [f"{base}#chunk-{i}" for i in range(1, len(page["chunks"]) + 1)]
        title = page["title"].replace(" ", "_")
        urls += [f"https://en.wikipedia.org/wiki/{title}", f"/wiki/{title.upper()}#chunk-1"]
    urls += [
        "https://en.wikipedia.org/wiki/99",
        "https://en.wikipedia.org/wiki/Pareto",
        "/w/index.php?title=X",
    ]
    for url in urls:
        args = json.dumps({"url": url})
        assert ref.call_tool("open_url", args) == native.call_tool("open_url", args), url


@pytest.mark.parametrize("metric", METRICS)
def test_search_observations_and_title_search_are_the_native_ones(engines, metric):
    native, ref = WikiTools(engines["native"]), WikiTools(engines[metric])
    for query in QUESTIONS[::4]:
        for args in (
            {"query": query, "top_k": 5, "method": "rrf"},
            {"query": query, "top_k": 3, "method": "keywords"},
            {"query": query, "top_k": 3, "method": "vector"},
            {"query": query, "top_k": 5, "only_title": True},
        ):
            assert ref.call_tool("search", json.dumps(args)) == native.call_tool("search", json.dumps(args))


def test_titles_resolve_exactly_then_case_insensitively_but_no_redirects(engines):
    native, ref = engines["native"], engines["ip"]
    for page in lead_pages():
        for title in (page["title"], page["title"].lower(), page["title"].upper().replace(" ", "_")):
            assert ref.resolve_page(title) == native.resolve_page(title) == page["page_id"]
    assert ref.index.keyword.page_by_title("bitcoin") is None  # exact: the case must match
    assert ref.index.keyword.page_by_title("bitcoin", folded=True) == 1010
    assert ref.index.keyword.page_by_title("Frozen") is None  # a phrase of the title, not the title
    assert native.resolve_page("KAT") == 1000  # a redirect of the dump; the reference's archive has none
    assert ref.resolve_page("KAT") is None and ref.index.keyword.redirect_target("KAT") is None
    assert ref.resolve_page("1010") == 1010 and ref.resolve_page("1011") is None


def test_random_pages_and_page_lookups_are_the_native_ones(engines):
    native, ref = engines["native"], engines["l2"]
    for seed in range(20):
        assert ref.random_page(random.Random(seed)) == native.random_page(random.Random(seed))
    for page in lead_pages():
        assert ref.page_chunks(page["page_id"]) == native.page_chunks(page["page_id"])
    keyword = ref.index.keyword
    assert keyword.page_chunks(1011) == [] and keyword.page_n_chunks(1011) is None
    assert keyword.chunk_at_row(17) is None and keyword.chunk_at_row(-1) is None
    assert keyword.chunks_by_id(["1010_1", "1010_9", "x", "01010_0", ""]).keys() == {"1010_1"}
    assert (keyword.num_chunks, keyword.num_pages) == (17, 12)


def test_chunks_are_found_through_their_pages_where_chunk_id_is_not_indexed(engines, embedder):
    """The reference never queries ``chunk_id`` (its archive may store it unindexed): hydration then reads the
    candidates' pages by ``doc_id``, with the same hits."""
    ref = SearchEngine.open(engines["ip"].index.path, embedder=embedder)
    ref.index.keyword._by_chunk_id = False
    wanted = ["1000_2", "1010_0", "1100_1", "1100_7"]
    assert ref.index.keyword.chunks_by_id(wanted) == engines["ip"].index.keyword.chunks_by_id(wanted)
    assert len(ref.index.keyword.chunks_by_id(wanted)) == 3
    for method in ("vector", "rrf"):
        assert _found(ref.search(QUESTIONS[0], 10, method)) == _found(
            engines["native"].search(QUESTIONS[0], 10, method)
        )
