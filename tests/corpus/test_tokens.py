"""The tiktoken path gives exactly the ids of Qwen3's tokenizer.json on real text."""

from pathlib import Path

import pytest

from sws.corpus.dump import DumpUnit, WikiDumpReader
from sws.corpus.tokens import token_counter
from sws.corpus.wikitext import WikitextConverter

TOKENIZER_JSON = str(Path(__file__).parent.parent / "data" / "qwen3_tokenizer.json")


@pytest.fixture(scope="module")
def counters():
    return token_counter("qwen3"), token_counter(TOKENIZER_JSON)


def test_ids_identical_on_real_pages(counters, wiki_samples):
    fast, reference = counters
    converter = WikitextConverter()
    compared = 0
    for path in wiki_samples:
        for page in WikiDumpReader(DumpUnit(str(path))).pages():
            markdown = converter.convert(page.title, page.text, page.timestamp).markdown
            for text in (page.text, markdown):
                assert fast.encode(text) == reference.encode(text), page.title
                compared += 1
    assert compared > 400


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n\n\n",
        "Café naïve ﬁ",
        "e\u0301",
        "1984年 it's 'S",
        "<|endoftext|> <think>x</think>",
        "a  \n\t b",
        "🙂" * 5,
    ],
)
def test_ids_identical_on_edge_cases(counters, text):
    fast, reference = counters
    assert fast.encode(text) == reference.encode(text)
    assert fast.count_many([text, text]) == [len(reference.encode(text))] * 2
