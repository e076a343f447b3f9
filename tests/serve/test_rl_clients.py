"""Each RL framework's own client code against ``sws``'s ``/retrieve`` and ``/access`` over real HTTP (uvicorn on
127.0.0.1, the sample index, the server's default settings): the client reads from sws the documents it would
read from its own server (issue 44). How each framework is covered; re-check them when their code moves:

- veRL: the client module of the pinned package, ``verl.tools.utils.search_r1_like_utils`` of ``verl==0.7.1``
  (byte-identical to volcengine/verl b178a3c, as is ``verl/tools/search_tool.py``, whose ``SearchTool`` calls
  ``perform_single_search_batch``; verl 0.8.0 on ships no search tool). verl's own requirements pin numpy<2
  and its training stack, so ``.ci/run`` installs it with ``--no-deps`` beside the environment, in
  ``<venv>/rl-clients`` (its wheel also brings top-level ``tests`` and ``scripts`` packages, kept off the
  import path), and the module is loaded alone: it needs only ``requests``, while ``verl/__init__.py`` imports
  all of verl.
- SkyRL: SkyRL-gym's search environment, ``skyrl_gym.envs.search.env.SearchEnv`` of the pinned
  ``skyrl-gym==0.4.0`` (the dev extra; its ``tools/search.py`` byte-identical to NovaSky-AI/SkyRL a956457),
  stepped as the trainer steps it.
- Search-R1, rLLM, ASearcher: on no package index (rLLM's tool is an example its package does not ship), so the
  requests their current code sends, the fields it reads and how it renders them are recorded as data with the
  commit and an attribution line (``tests/data/rl_clients/``), and sws's answers are checked against their own
  servers' answers at every path the client reads (same count, same type), then rendered as they render them.
"""

from __future__ import annotations

import glob
import importlib.metadata
import importlib.util
import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.config.serving import DEFAULT_PORT
from tests.ui.helpers import ServedApp

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "tests" / "data" / "rl_clients"
INTEGRATIONS = REPO / "configs" / "integrations"
TOKENIZER = REPO / "tests" / "data" / "qwen3_tokenizer.json"
RL_CLIENTS = Path(sys.prefix) / "rl-clients"  # verl, installed --no-deps by .ci/run
VERL = "0.7.1"
QUESTIONS = ["history of Sudan", "who directed Nosferatu", "Polish footballer Olisadebe"]


@contextmanager
def served(backend):
    """``backend`` behind sws's HTTP app with the server's default settings; yields the root URL."""
    service = RetrievalService(backend)
    try:
        with ServedApp(make_http_app(service, retry_after_s=0.1)) as app:
            yield app.url
    finally:
        service.close()


def expected_hits(engine, queries: list[str], k: int) -> list[list[Any]]:
    """The chunks the engine ranks for ``queries`` searched as one batch (as ``/retrieve`` searches them)."""
    return [[hit.chunk for hit in hits] for hits in engine.batch_search(queries, k, "rrf")]


def recorded(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{name}.json").read_text())


def values_at(data: Any, path: str) -> list[Any]:
    """The values at ``path`` (``result[*][*].document.contents``: ``[*]`` every item, ``.key`` a field); a
    missing field or a list where none is expected fails the test, as it fails the client."""
    values = [data]
    for token in re.findall(r"\[\*\]|[^.\[\]]+", path):
        if token == "[*]":
            assert all(isinstance(v, list) for v in values), f"{path}: not a list at {token}"
            values = [item for v in values for item in v]
        else:
            assert all(isinstance(v, dict) and token in v for v in values), f"{path}: no '{token}'"
            values = [v[token] for v in values]
    return values


def check_reads(answer: Any, reference: Any, paths: list[str]) -> None:
    """At every path the client reads, sws's answer holds as many values as its own server's, of its types,
    and no string is empty."""
    for path in paths:
        got, want = values_at(answer, path), values_at(reference, path)
        assert len(got) == len(want), f"{path}: {len(got)} values, the reference server gives {len(want)}"
        assert [type(v) for v in got] == [type(v) for v in want], path
        assert all(v for v in got if isinstance(v, str)), f"{path}: an empty string"


def title_and_text(contents: str) -> tuple[str, str]:
    """The recorded clients' split: the first line, the lines after it."""
    title, _, text = contents.partition("\n")
    return title, text


# veRL ----------------------------------------------------------------------------------------------------------


def verl_client():
    """``verl.tools.utils.search_r1_like_utils`` of the pinned verl, executed alone."""
    dist = next(iter(importlib.metadata.distributions(name="verl", path=[str(RL_CLIENTS)])), None)
    assert dist is not None and dist.version == VERL, (
        f"verl=={VERL} is not in {RL_CLIENTS}: `pip install --no-deps --target {RL_CLIENTS} verl=={VERL}` (.ci/run)"
    )
    file = Path(dist.locate_file("verl/tools/utils/search_r1_like_utils.py"))
    spec = importlib.util.spec_from_file_location("verl_search_r1_like_utils", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _FlakyEngine:
    """The sample engine whose first ``failures`` batched searches fail (a replica's index not yet mapped)."""

    def __init__(self, engine, failures: int):
        self.engine, self.failures = engine, failures

    def batch_search(self, *args):
        if self.failures:
            self.failures -= 1
            raise OSError("index not mapped yet")
        return self.engine.batch_search(*args)

    def __getattr__(self, name):
        return getattr(self.engine, name)


def test_verl_search_tool_reads_every_hit_and_retries_a_503(engine):
    utils = verl_client()
    config = yaml.safe_load((INTEGRATIONS / "verl_search_tool.yaml").read_text())["tools"][0]["config"]
    topk, timeout = config["topk"], config["timeout"]
    flaky = _FlakyEngine(engine, failures=1)
    with served(flaky) as url:
        # the first search fails (503 with Retry-After): veRL waits a second and tries again
        one, one_meta = utils.perform_single_search_batch(
            f"{url}/retrieve", [QUESTIONS[2]], topk, timeout=timeout
        )
        text, meta = utils.perform_single_search_batch(f"{url}/retrieve", QUESTIONS, topk, timeout=timeout)
        empty, empty_meta = utils.perform_single_search_batch(f"{url}/retrieve", [""], topk, timeout=timeout)
        # a request that can never succeed (422) is given up at once
        refused, error = utils.call_search_api(f"{url}/retrieve", QUESTIONS, topk=0, timeout=timeout)
    assert flaky.failures == 0 and one_meta["status"] == "success" and one_meta["total_results"] == topk
    assert (meta["status"], meta["total_results"], meta["api_request_error"]) == ("success", 3 * topk, None)
    assert refused is None and "422" in error
    # what the model reads: per query `Doc i (Title: "<title>")\n<text>`, the queries' blocks joined by ---
    blocks = json.loads(text)["result"].split("\n---\n")
    assert len(blocks) == len(QUESTIONS)
    for block, chunks in zip(blocks, expected_hits(engine, QUESTIONS, topk), strict=True):
        for i, chunk in enumerate(chunks, 1):
            assert f'Doc {i} (Title: "{chunk.title}")\n{chunk.text[:100]}' in block
        assert f"Doc {topk + 1} " not in block
    # an empty query is searched, as the reference servers search it (a dense one finds top-k)
    assert (empty_meta["status"], empty_meta["total_results"]) == ("success", topk)
    assert f"Doc {topk} (Title: " in json.loads(empty)["result"]
    # veRL's agent loop cuts a tool response at multi_turn.max_tool_response_length characters (256 by
    # default, in the middle): configs/integrations/verl_search_tool.yaml says to raise it to 2048, which holds
    # one query's hits whole at the server's default cut
    assert len(one) <= 2048


# SkyRL ---------------------------------------------------------------------------------------------------------


def skyrl_env(url: str):
    from skyrl_gym.envs.search.env import SearchEnv, SearchEnvConfig

    search = yaml.safe_load((INTEGRATIONS / "skyrl_search_env.yaml").read_text())["environment"]
    options = search["skyrl_gym"]["search"] | {"search_url": f"{url}/retrieve"}
    env = SearchEnv(SearchEnvConfig(**options), extras={"reward_spec": {"ground_truth": {"target": ["x"]}}})
    env.init([{"role": "user", "content": "Who was Emmanuel Olisadebe?"}])
    return env, options["topk"]


def skyrl_search(env, action: str) -> str:
    """One step of the environment: the tool's text inside the observation's ``<information>``."""
    (observation,) = env.step(action)["observations"]
    content = observation["content"]
    assert content.startswith("\n<information>") and content.endswith("</information>\n")
    return json.loads(content.removeprefix("\n<information>").removesuffix("</information>\n"))["result"]


def test_skyrl_search_env_reads_every_hit_of_its_single_query_form(engine):
    """SkyRL-gym posts ``{"query", "topk", "return_scores"}`` and reads ``result`` (one list), as its own server
    answers; without it every search would read "No search results found."."""
    with served(engine) as url:
        env, topk = skyrl_env(url)
        found = skyrl_search(env, f"<think>who?</think>\n<search> {QUESTIONS[2]} </search>")
        env, _ = skyrl_env(url)
        empty = skyrl_search(env, "<search></search>")
    assert found != "No search results found." and not found.startswith("Search error")
    (chunks,) = expected_hits(engine, [QUESTIONS[2]], topk)
    lines = found.split("\n")
    for i, chunk in enumerate(chunks, 1):
        assert f'Doc {i}: "{chunk.title}"\n{chunk.text[:100]}' in found
    assert sum(line.startswith("Doc ") for line in lines) == topk
    # an empty query is searched, as the reference servers search it (a dense one finds top-k)
    assert sum(line.startswith("Doc ") for line in empty.split("\n")) == topk


# Search-R1 (recorded) ------------------------------------------------------------------------------------------


def test_search_r1_reads_what_its_own_server_gives_and_the_closing_tag_fits(engine):
    """Its rollout sends a turn's searches in one request and reads ``result[i][j].document.contents``; each
    observation is cut at ``max_obs_length`` tokens (500; counted here with Qwen3's tokenizer, whose vocabulary
    is Qwen2.5's), and must end with ``</information>`` uncut for 3 hits at the server's default."""
    from tokenizers import Tokenizer

    record = recorded("search_r1")
    render, max_obs = record["render"], record["client"]["max_obs_length"]
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    with served(engine) as url:
        answers = [
            httpx.post(f"{url}{exchange['request']['path']}", json=exchange["request"]["json"], timeout=60)
            for exchange in record["exchanges"]
        ]
    for exchange, answer in zip(record["exchanges"], answers, strict=True):
        # anything else ends the run: it never retries, and reads 'result' from any answer
        assert answer.status_code == 200, answer.text
        check_reads(answer.json(), exchange["response"], exchange["reads"])
        body = exchange["request"]["json"]
        expected = expected_hits(engine, body["queries"], body["topk"])
        for hits, chunks in zip(answer.json()["result"], expected, strict=True):
            rendered = ""
            for i, hit in enumerate(hits, 1):
                title, text = title_and_text(hit["document"]["contents"])
                rendered += render["hit"].format(i=i, title=title, text=text)
            observation = render["observation"].format(rendered_stripped=rendered.strip())
            tokens = tokenizer.encode(observation, add_special_tokens=False).ids
            assert len(tokens) <= max_obs, f"{len(tokens)} tokens: </information> cut off at {max_obs}"
            for i, chunk in enumerate(chunks, 1):
                assert f'Doc {i}(Title: "{chunk.title}") {chunk.text[:100]}' in observation


# rLLM (recorded) -----------------------------------------------------------------------------------------------


def url_file_roots(path: Path) -> list[str]:
    """The server roots of an rLLM URL file, read by the recorded rules (``client.url_file_lines``)."""
    lines = [line.strip().rstrip("/") for line in path.read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_rllm_finds_the_server_in_its_url_file_and_reads_ids_and_contents(engine, tmp_path):
    """rLLM's train.py takes the server roots from a URL file and reads ``results[i]``'s ``id``, ``score`` and
    ``content`` (its server's corpus row: ``content.contents``); with ``document`` alone it reads empty
    documents."""
    record = recorded("rllm")
    render = record["render"]
    assert url_file_roots(INTEGRATIONS / "rllm_rag_url") == [f"http://127.0.0.1:{DEFAULT_PORT}"]
    with served(engine) as url:
        (tmp_path / "rag_url").write_text(f"# sws serve\n{url}/\n")
        (root,) = url_file_roots(tmp_path / "rag_url")
        answers = [
            httpx.post(f"{root}{exchange['request']['path']}", json=exchange["request"]["json"], timeout=90)
            for exchange in record["exchanges"]
        ]
    for exchange, answer in zip(record["exchanges"], answers, strict=True):
        assert answer.status_code == 200, answer.text  # else the model reads "Error: All servers failed. ..."
        check_reads(answer.json(), exchange["response"], exchange["reads"])
        body = exchange["request"]["json"]
        (chunks,) = expected_hits(engine, [body["query"]], body["top_k"])
        documents = []
        for i, result in enumerate(answer.json()["results"], 1):
            content = result["content"]
            content = content["contents"] if isinstance(content, dict) else content
            if len(content) > render["cut"]:
                content = content[: render["cut"]] + render["cut_suffix"]
            documents.append(render["hit"].format(i=i, content=content))
        shown = render["join"].join(documents)
        for i, chunk in enumerate(chunks, 1):
            assert f'[Document {i}]\n"{chunk.title}"\n{chunk.text[:100]}' in shown
        assert [r["id"] for r in answer.json()["results"]] == [chunk.chunk_id for chunk in chunks]


# ASearcher (recorded) ------------------------------------------------------------------------------------------


def address_lines(directory: Path, pattern: str) -> list[str]:
    """What ASearcher's client reads at construction: every line of every address file matching its glob."""
    return [
        line
        for name in glob.glob(f"{directory}/{pattern}")
        for line in Path(name).read_text().splitlines(keepends=True)
    ]


def test_asearcher_finds_the_address_file_and_reads_results_and_whole_pages(engine, tmp_path):
    """ASearcher's client globs ``$RAG_SERVER_ADDR_DIR/Host*_IP*.txt`` (none: IndexError at construction),
    searches with ``return_scores: false`` and reads each document's ``contents`` and ``url``, then opens a URL
    with ``/access`` and reads the whole page from ``contents``, in the URL forms its own server reads too."""
    record = recorded("asearcher")
    client, forms = record["client"], record["url_forms"]
    assert address_lines(INTEGRATIONS / "asearcher", client["address_glob"]) == [f"127.0.0.1:{DEFAULT_PORT}"]
    search, access = record["exchanges"]
    body = search["request"]["json"]
    (chunks,) = expected_hits(engine, body["queries"], body["topk"])
    assert " " in chunks[0].title  # the URL forms' %20
    title = chunks[0].title.replace(" ", "%20")
    with served(engine) as url:
        host, port = url.removeprefix("http://").split(":")
        (tmp_path / f"Host{host}_IP{port}.txt").write_text(f"{host}:{port}")  # as its own server writes it
        (address,) = address_lines(tmp_path, client["address_glob"])
        base = f"http://{address}"
        found = httpx.post(f"{base}/retrieve", json=body, timeout=120)
        assert found.status_code == 200, found.text  # else it retries ten times, 10 s apart, then raises
        urls = [doc["url"] for doc in found.json()["result"][0]]
        asked = urls + [form.format(title_pct20=title) for form in forms["forms"]]
        opened = httpx.post(f"{base}/access", json={"urls": asked}, timeout=120)
    check_reads(found.json(), search["response"], search["reads"])
    for i, (doc, chunk) in enumerate(zip(found.json()["result"][0], chunks, strict=True), 1):
        rendered = record["render"]["doc"].format(i=i, url=doc["url"], contents=doc["contents"])
        assert rendered.startswith(f'[Doc {i}]({doc["url"]}):\n"{chunk.title}"\n{chunk.text[:100]}')
    assert opened.status_code == 200, opened.text
    pages = opened.json()["result"]
    assert len(pages) == len(asked) and all(page is not None for page in pages), pages
    check_reads({"result": pages[:1]}, access["response"], access["reads"])
    # a result's URL opens its whole page (every chunk of it, as ASearcher's pages file holds whole pages); the
    # reference's URL forms open the same page
    for page, chunk in zip(pages, chunks, strict=False):
        for part in engine.page_chunks(chunk.page_id):
            assert part.text.strip().splitlines()[-1][-60:] in page["contents"]
    assert pages[len(urls)] == pages[len(urls) + 1] == pages[0]
