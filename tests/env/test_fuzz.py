"""10,000 random and hostile tool calls: nothing escapes, and every answer is a contract observation."""

import json
import random

from sws.env import INVALID_URL_MESSAGE, NO_RESULTS, WikiTools

N_CALLS = 10_000
ERROR_KEYS = ["status", "tool", "arguments", "error_type", "error", "hint"]
ARGUMENT_ERRORS = {"ValueError", "TypeError", "JSONDecodeError", "RecursionError"}  # never a backend failure
OPEN_URL_PREFIXES = ("# ", "No document found for identifier: ", "Document with ID '", "Chunk not found: ")

SYNTAX = list("\"'+-!(){}[]^~*?:\\/%#█\x00\n\t") + ["&&", "||", "AND", "OR", "NOT", "title:", "*:*"]
SCRIPTS = ["Einstein", "Ulm", "Zürich", "北京大学", "アインシュタイン", "Москва", "القاهرة"]
SCRIPTS += ["हिन्दी", "שלום", "😀🧪", "ǅ", "ﬁ", "١٢٣", "²", "e\u0301", "\u200b\u200d\ufeff", "\u202e"]
SCRIPTS += ["\ud800"]  # a lone surrogate
NAMES = ["search", "open_url", "submit_answer"]
BAD_NAMES = ["", " ", "Search", "SEARCH", " search\n", "open-url", "browse", "submit", "北京", "\x00"]
BAD_NAMES += ["a" * 5000]
TOP_KS = [0, -1, -(10**20), 1, 3, 49, 50, 51, 10**6, 10**40, 2.5, -0.5, 1e308, "5", "5.5", "", "ten", None]
TOP_KS += [True, False, [], {}, [5], "NaN", "Infinity"]
BOOLS = [True, False, None, 0, 1, 2, -1, 0.5, "true", "false", "False", "0", "1", "no", "yes", "maybe", ""]
BOOLS += [[], {}]
METHODS = ["rrf", "keywords", "vector", "mix", "kw", "kws", "keyword", "vec", "", None, "RRF", " Vector "]
METHODS += ["bm25", "hybrid", "dense", 3, [], {}, True, "rrf; DROP TABLE"]
IDENTIFIERS = ["736", "1984", "42", "7", "0", "-1", "999", "Albert_Einstein", "Einstein", "Ghost_page"]
IDENTIFIERS += ["einstein", "C%2B%2B_%28lang%29%2Fx", "%zz", "%", "%E2%96%88", "%00", "a/b/c", ".."]
IDENTIFIERS += ["Who?x=1", "%20", ""]
FRAGMENTS = ["", "#chunk-1", "#chunk-2", "#chunk-3", "#chunk-4", "#chunk-0", "#chunk-007", "#Chunk-1"]
FRAGMENTS += ["#chunk--1", "#chunk-1.5", "#chunk-" + "9" * 5000, "#History", "#", "##chunk-1", "#chunk-١"]
PREFIXES = ["https://en.wikipedia.org/wiki/", "http://example.com/wiki/", "/wiki/", "wiki/", "//wiki/"]
PREFIXES += ["https://x/w/index.php?title=", "http://[::1/wiki/", "file:///wiki/", "  /wiki/"]
PREFIXES += ["javascript:/wiki/"]
RAW_ARGUMENTS = [None, "", "{", "}", "{'query': 'x'}", '{"query": "x",}', "null", "[]", '["x"]', "3", '"q"']
RAW_ARGUMENTS += ["true", "\x00", '{"query": "x"}}}', '{"query": "\\ud800"}']
RAW_ARGUMENTS += ['{"query": "x", "top_k": 1e999}']
RAW_ARGUMENTS += ['{"query": "x", "top_k": NaN}', '{"query": "x", "top_k": -Infinity}']
RAW_ARGUMENTS += ["[" * 50_000 + "]" * 50_000]  # nesting deeper than the recursion limit
RAW_ARGUMENTS += ['{"query": "x", "top_k": 1' + "0" * 5000 + "}"]  # more digits than Python converts


def random_text(rng: random.Random) -> str:
    pieces = rng.choices(
        [*SYNTAX, *SCRIPTS, "Einstein", "Princeton", "relativity", " "], k=rng.randint(0, 12)
    )
    text = rng.choice(["", " "]).join(pieces)
    if rng.random() < 0.03:
        text = (text or "Ulm ") * (100_000 // max(1, len(text or "Ulm ")))  # ~100 kB
    return text


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 2 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -7, 3, 10**25, 1.5, -0.0, 1e-300])
    if kind in (3, 4):
        return random_text(rng)
    if kind == 5:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {random_text(rng)[:10]: random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def random_url(rng: random.Random):
    if rng.random() < 0.1:
        return random_value(rng)
    url = rng.choice(PREFIXES) + rng.choice(IDENTIFIERS + [random_text(rng)]) + rng.choice(FRAGMENTS)
    return url if rng.random() < 0.97 else url * (100_000 // max(1, len(url)))


def random_arguments(rng: random.Random, name: str) -> str | None:
    roll = rng.random()
    if roll < 0.08:  # not JSON, or JSON that is not an object
        return rng.choice([*RAW_ARGUMENTS, random_text(rng)])
    args: dict = {}
    if name == "search" or roll < 0.15:
        if rng.random() < 0.9:
            args["query"] = random_text(rng) if rng.random() < 0.85 else random_value(rng)
        for key, choices in (("top_k", TOP_KS), ("only_title", BOOLS), ("method", METHODS)):
            if rng.random() < 0.6:
                args[key] = rng.choice(choices)
    if (name == "open_url" or roll < 0.2) and rng.random() < 0.93:
        args["url"] = random_url(rng)
    if (name == "submit_answer" or roll < 0.25) and rng.random() < 0.9:
        args["answer"] = random_value(rng)
    if rng.random() < 0.1:
        args[random_text(rng)[:20]] = random_value(rng)  # unknown keys are ignored
    return json.dumps(args, ensure_ascii=rng.random() < 0.5)


def check_observation(name: str, arguments: str | None, observation: object) -> None:
    assert isinstance(observation, str), (name, arguments)
    tool = str(name or "").strip()
    try:
        data = json.loads(observation)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("status") == "error":
        assert list(data) == ERROR_KEYS and data["tool"] == tool and data["arguments"] == (arguments or "{}")
        assert data["error_type"] in ARGUMENT_ERRORS, (name, arguments, data)
        return
    if tool == "submit_answer":
        assert (
            list(data) == ["status", "answer"]
            and data["status"] == "done"
            and isinstance(data["answer"], str)
        )
    elif tool == "search":
        assert observation == NO_RESULTS or observation.startswith("1. ["), observation[:200]
    else:
        assert tool == "open_url", (name, observation[:200])
        assert observation == INVALID_URL_MESSAGE or observation.startswith(OPEN_URL_PREFIXES), observation[
            :200
        ]


def test_fuzz_tool_calls(backend):
    rng = random.Random(20260601)
    tools = WikiTools(backend)
    kinds: dict[str, int] = {}
    for _ in range(N_CALLS):
        name = rng.choice(NAMES) if rng.random() < 0.93 else rng.choice(BAD_NAMES)
        arguments = random_arguments(rng, name.strip())
        observation = tools.call_tool(name, arguments)
        check_observation(name, arguments, observation)
        kind = "error" if observation.startswith('{"status": "error"') else name.strip()
        kinds[kind] = kinds.get(kind, 0) + 1
    assert all(kinds.get(k, 0) > 500 for k in ["search", "open_url", "submit_answer", "error"]), kinds
    for call in backend.calls:  # the backend only ever saw validated arguments
        if call[0] == "search":
            assert (
                call[1] == call[1].strip() != ""
                and 1 <= call[2] <= 50
                and call[3] in ("rrf", "keywords", "vector")
            )
        elif call[0] == "search_titles":
            assert 1 <= call[2] <= 50
