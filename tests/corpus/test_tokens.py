"""The default Qwen3 counter gives exactly the ids of Qwen3's tokenizer.json, on real and adversarial text."""

import random
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


def test_ids_identical_on_random_mixtures(counters):
    """Whitespace kinds, combining marks, CJK, emoji, digits, quotes and added-token pieces in random order."""
    fast, reference = counters
    alphabet = [
        "a",
        "Zé",
        "e\u0301",
        " ",
        "  ",
        "\n",
        "\t",
        "\r\n",
        "\u00a0",
        "\u200b",
        ",",
        ".",
        "'s",
        "'",
        '"',
        "—",
        "東京",
        "😀",
        "👍🏽",
        "0",
        "12",
        "<",
        "|",
        ">",
        "<|im_end|>",
        "<think>",
        "_",
        "ﬁ",
    ]
    rnd = random.Random(15)
    texts = ["".join(rnd.choices(alphabet, k=rnd.randint(1, 40))) for _ in range(3000)]
    assert [fast.encode(t) for t in texts] == [reference.encode(t) for t in texts]


def test_long_whitespace_runs(counters):
    fast, reference = counters
    for text in (" " * 1_000_000, "\n" * 300_000 + "x", "word " + "\t " * 200_000):
        assert fast.count(text) == reference.count(text)
