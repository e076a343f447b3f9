"""``sws search`` / ``sws open`` print exactly the tool observations; index errors are one-line CLI errors."""

import json

from click.testing import CliRunner

from sws.cli.index import open_command, search_command
from sws.env import WikiTools


def test_search_and_open_print_the_observations(leads_root, engine):
    index = str(leads_root / "index")
    tools = WikiTools(engine)
    result = CliRunner().invoke(
        search_command, ["--index", index, "dog breed", "--method", "keywords", "--top-k", "2"]
    )
    assert result.exit_code == 0, result.output
    expected = tools.call_tool("search", json.dumps({"query": "dog breed", "top_k": 2, "method": "keywords"}))
    assert result.stdout == expected + "\n"
    assert result.stdout.startswith(
        "1. [Rat Terrier](https://en.wikipedia.org/wiki/1100#chunk-1)\n   - Section 0:"
    )
    titles = CliRunner().invoke(search_command, ["--index", index, "Bitcoin", "--only-title"])
    assert titles.stdout.startswith(
        "1. [Bitcoin](https://en.wikipedia.org/wiki/1010#chunk-1)\n   - Section 0: Preamble This article"
    )
    opened = CliRunner().invoke(open_command, ["--index", index, "https://en.wikipedia.org/wiki/BTC#chunk-1"])
    chunk = json.dumps({"url": "https://en.wikipedia.org/wiki/1010#chunk-1"})
    assert opened.stdout == tools.call_tool("open_url", chunk) + "\n"


def test_rrf_uses_the_index_embedder(leads_root):
    result = CliRunner().invoke(
        search_command, ["--index", str(leads_root / "index"), "president of Argentina", "--top-k", "1"]
    )
    assert result.exit_code == 0 and result.stdout.startswith(
        "1. [Javier Milei](https://en.wikipedia.org/wiki/1090#chunk-1)"
    )


def test_missing_index_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(search_command, ["--index", str(tmp_path), "x"])
    assert result.exit_code == 1
    assert (
        result.output.strip()
        == f"Error: no index at {tmp_path}: manifest.json is missing (run `sws build index`)"
    )
