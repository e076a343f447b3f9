"""Acceptance on an index built from a real dump sample by the real corpus build (needs Ray for the corpus).

Corpus: ``tests/data/camchenry_enwiki-10k.xml.bz2`` (real enwiki pages: 79 chunks, 85 redirects);
vectors: the packaged MiniLM (max 128 tokens, to stay fast); Tantivy + FAISS through ``build_index``.
"""

import json
import re
from pathlib import Path

import pytest

from sws.env import WikiTools, render_article_view, render_chunk_view

pytestmark = pytest.mark.ray
SAMPLE = Path(__file__).parents[1] / "data" / "camchenry_enwiki-10k.xml.bz2"
URL = re.compile(r"\]\((https://en\.wikipedia\.org/wiki/(\d+)#chunk-(\d+))\)")


@pytest.fixture(scope="module")
def real(tmp_path_factory, ray_local):
    from sws.config import load_config, to_dict
    from sws.corpus.build import build_corpus
    from sws.index import SentenceTransformerEmbedder, build_index
    from sws.search import SearchEngine

    root = tmp_path_factory.mktemp("real")
    cfg = to_dict(load_config("local"))
    build_corpus([str(SAMPLE)], root / "corpus", clean=cfg["clean"], chunk=cfg["chunk"], progress=False)
    embedder = SentenceTransformerEmbedder(device="cpu", max_length=128)
    build_index(root / "corpus", root / "index", embedder=embedder, embed_options={"workers": 0})
    engine = SearchEngine.open(root / "index", embedder=embedder)
    return engine, WikiTools(engine)


QUERIES = [
    "Olisadebe Polish footballer",
    "history of Sudan under Anglo-Egyptian rule",
    "pneumonia in intensive care",
    "hotel in Canada",
    "bridge in Pasadena",
]


def test_every_chunk_url_from_search_opens_that_chunk(real):
    engine, tools = real
    opened = 0
    for query in QUERIES:
        for method in ("rrf", "keywords", "vector"):
            observation = tools.call_tool(
                "search", json.dumps({"query": query, "top_k": 8, "method": method})
            )
            for url, page, number in URL.findall(observation):
                chunks = engine.page_chunks(int(page))
                chunk = chunks[int(number) - 1]
                assert chunk.chunk_index == int(number) - 1
                view = tools.call_tool("open_url", json.dumps({"url": url}))
                assert view == render_chunk_view(chunk.title, int(number), len(chunks), chunk.text)
                opened += 1
    assert opened >= 60


def test_page_url_returns_the_whole_article(real):
    engine, tools = real
    page = engine.resolve_page("Emmanuel Olisadebe")
    chunks = engine.page_chunks(page)
    assert len(chunks) == 3
    article = tools.call_tool("open_url", json.dumps({"url": f"https://en.wikipedia.org/wiki/{page}"}))
    assert article == render_article_view("Emmanuel Olisadebe", page, [c.text for c in chunks])
    assert article.startswith(f"# Emmanuel Olisadebe (ID: {page})\n\n## Section 0: Preamble\n")


def test_title_url_resolves_through_a_dump_redirect(real):
    engine, tools = real
    target = engine.resolve_page("Moishezon manifold")
    assert engine.resolve_page("Moishezon_space") == target  # a redirect page of the dump
    view = tools.call_tool(
        "open_url", json.dumps({"url": "https://en.wikipedia.org/wiki/Moishezon_space#chunk-1"})
    )
    assert view.startswith("# Moishezon manifold (chunk 1/1)\n\n")


def test_indexes_hold_the_corpus(real):
    engine, _ = real
    manifest = engine.index.manifest
    assert manifest["corpus"]["chunks"] == engine.index.keyword.num_chunks == engine.index.dense.ntotal == 79
    assert manifest["keyword"]["redirects"] == 85
    hits = engine.search("Emmanuel Olisadebe", 3, "keywords")
    assert hits[0].chunk.title == "Emmanuel Olisadebe"
