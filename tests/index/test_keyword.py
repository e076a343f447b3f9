"""The Tantivy side: query building (escaping, phrases, parser parity), analyzers, lookups."""

import pytest
import tantivy

from sws.index.keyword import TOKENIZERS, TantivySearcher, build_query, make_analyzer, split_query
from sws.index.keyword.query import query_leaves, word_leaves
from sws.index.keyword.schema import CHUNK_FIELD_BOOSTS


def test_split_query_keeps_balanced_phrases_only():
    assert split_query('foo "bar baz" +x "open') == [("foo ", False), ("bar baz", True), (' +x "open', False)]
    assert split_query('""') == []


def test_leaves_terms_phrases_and_counts():
    leaf_of = word_leaves(make_analyzer("default"))
    leaves = query_leaves(leaf_of, 'The "the Hobbit" state-of-the-art title:X the the', max_leaves=100)
    assert leaves == {
        ((0, "the"),): 2,  # "The" and "the" (repeated verbatim: once)
        ((0, "the"), (1, "hobbit")): 1,
        ((0, "state"), (1, "of"), (2, "the"), (3, "art")): 1,
        ((0, "title"), (1, "x")): 1,
    }
    assert len(query_leaves(leaf_of, " ".join(f"w{i}" for i in range(50)), max_leaves=10)) == 10


@pytest.mark.parametrize("name", TOKENIZERS)
def test_analyzers(name):
    tokens = make_analyzer(name).analyze("Running Gödel's ÉCOLE " + "x" * 45)
    folded = name.endswith("_ascii")
    stemmed = name.startswith("en_stem")
    assert tokens[0] == ("run" if stemmed else "running")
    assert tokens[1] == ("godel" if folded else "gödel")
    assert len(tokens) == 4  # the 45-byte token is dropped
    with pytest.raises(ValueError, match="unknown keyword tokenizer"):
        make_analyzer("porter")


@pytest.fixture(scope="module")
def chunks(leads_root):
    index = tantivy.Index.open(str(leads_root / "index" / "tantivy" / "chunks"))
    index.register_tokenizer("sws_default", make_analyzer("default"))
    return index


@pytest.mark.parametrize(
    "query",
    [
        "bitcoin network",
        "the first decentralized cryptocurrency",
        "dog dog breed terrier",
        "Dog dog",
        '"dog breed" dog "dog breed"',
    ],
)
def test_scores_equal_the_query_parser_on_plain_text(chunks, query):
    searcher = chunks.searcher()
    ours = build_query(chunks.schema, word_leaves(make_analyzer("default")), query, CHUNK_FIELD_BOOSTS)
    parsed = chunks.parse_query(query, ["text", "title"], CHUNK_FIELD_BOOSTS)
    got = [round(score, 4) for score, _ in searcher.search(ours, 10).hits]
    expected = [round(score, 4) for score, _ in searcher.search(parsed, 10).hits]
    assert got == expected and got


def test_empty_queries_build_nothing(chunks):
    assert (
        build_query(chunks.schema, word_leaves(make_analyzer("default")), '!!! "" ---', CHUNK_FIELD_BOOSTS)
        is None
    )


def test_a_word_is_analysed_once_and_queries_score_the_same(chunks):
    """The searcher's memo of words: later queries reuse them, and score as with a fresh analysis."""
    searcher, shared = chunks.searcher(), word_leaves(make_analyzer("default"))
    queries = ["bitcoin network", "the bitcoin network", "Network of the dog", "dog breed"]
    for query in queries:
        fresh = build_query(chunks.schema, word_leaves(make_analyzer("default")), query, CHUNK_FIELD_BOOSTS)
        reused = build_query(chunks.schema, shared, query, CHUNK_FIELD_BOOSTS)
        assert searcher.search(reused, 10).hits == searcher.search(fresh, 10).hits
    assert shared.cache_info().misses == 7  # bitcoin network the Network of dog breed
    phrase = '"' + " ".join(["dog breed"] * 10) + '"'  # over CACHED_CHARS: analysed, not remembered
    assert query_leaves(shared, phrase, 10) == query_leaves(word_leaves(make_analyzer("default")), phrase, 10)
    assert shared.cache_info().currsize == 7


def test_searcher_lookups(leads_root):
    searcher = TantivySearcher(leads_root / "index" / "tantivy", "default")
    assert (searcher.num_chunks, searcher.num_pages) == (17, 12)
    assert searcher.page_by_title("Bitcoin") == 1010 and searcher.page_by_title("bitcoin") is None
    assert searcher.page_by_title("BITCOIN", folded=True) == 1010
    assert searcher.redirect_target("KAT") == "KickassTorrents"
    assert searcher.redirect_target("Talk:Bitcoin") is None  # other namespaces are not indexed
    assert sorted(searcher.chunks_by_id(["1000_1", "nope", "1000_1"])) == ["1000_1"]
    assert searcher.page_n_chunks(1000) == 3 and searcher.page_n_chunks(1) is None
    counts = searcher.chunk_id_counts()
    assert len(counts) == 17 and {n for _, n in counts} == {1}
    keys = [(-h.score, h.row) for h in searcher.search("Bitcoin network the", 50)]
    assert keys == sorted(keys) and len(keys) > 5
