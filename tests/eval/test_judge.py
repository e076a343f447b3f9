"""The LLM judge (CONTRACT.md §7.3): exact prompt, verdict parsing and the disk cache, over real HTTP."""

import asyncio

import pytest

from sws.agent.scripted_server import Faults, ScriptedLLMServer
from sws.eval import JUDGE_SYSTEM_PROMPT, PROMPT_VERSION, LLMJudge, judge_prompt, parse_verdict

EXPECTED_BARE = """\
Decide whether the prediction is factually correct.
- Credit answers embedded in a longer response.
- Treat equivalent dates, spellings, and name variants as correct.
- Mark incorrect if it contradicts the golden answer or fails to answer.

Question: Who wrote Hamlet?
William Shakespeare
Prediction: Shakespeare, I think

Give one short sentence of reasoning, then write exactly True or False on the last line."""

EXPECTED_ALIASES = """\
Decide whether the prediction is factually correct.
- Credit answers embedded in a longer response.
- Treat equivalent dates, spellings, and name variants as correct.
- Mark incorrect if it contradicts the golden answer or fails to answer.

Question: Who wrote Hamlet?
Golden answer (any line below is acceptable):
William Shakespeare
- Shakespeare
- The Bard
Prediction: Shakespeare, I think

Give one short sentence of reasoning, then write exactly True or False on the last line."""


def test_prompt_exact():
    assert JUDGE_SYSTEM_PROMPT == (
        "You are an expert QA evaluator. Judge factual correctness only; ignore style, grammar, and punctuation."
    )
    args = (" Who wrote Hamlet? ", "William Shakespeare")
    assert judge_prompt(*args, [], "  Shakespeare, I think\n") == EXPECTED_BARE
    assert judge_prompt(*args, ["Shakespeare", " ", "The Bard"], "Shakespeare, I think") == EXPECTED_ALIASES
    paper = judge_prompt(*args, [], "Shakespeare, I think", variant="paper")
    assert "Golden answer (any line below is acceptable):\nWilliam Shakespeare\nPrediction:" in paper
    many = judge_prompt(*args, [f"a{i}" for i in range(40)], "x")
    assert "- a29\n" in many and "- a30" not in many  # at most 30 aliases


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        ("Matches the gold.\nTrue", 1),
        ("Wrong person.\nFalse.", 0),
        ("Reasoning.\n\n  correct  \n\n", 1),
        ("It is **False**", 0),  # via the regex
        ("The answer is yes but\n(True)", 1),
        ("Incorrect, the gold says no.\nverdict: wrong", 0),
        ("True, the model is right. Final: False", 0),  # last line, from the right
        ("I cannot decide.", None),
        ("", None),
        ("   \n", None),
        ("Error: rate limited, True", None),
        (None, None),
    ],
)
def test_parse_verdict(raw, verdict):
    assert parse_verdict(raw) == verdict


def run(coro):
    return asyncio.run(coro)


def test_judge_calls_caches_and_short_circuits(tmp_path):
    async def scenario(url):
        judge = LLMJudge(base_url=url, cache_dir=tmp_path, max_attempts=1)
        first = await judge.judge(
            "Who wrote Hamlet?", "William Shakespeare", ["Shakespeare"], "the playwright Will S."
        )
        again = await judge.judge(
            "Who wrote Hamlet?", "William Shakespeare", ["Shakespeare"], "the playwright Will S."
        )
        em = await judge.judge("Who wrote Hamlet?", "William Shakespeare", ["Shakespeare"], "shakespeare!")
        empty = await judge.judge("Who wrote Hamlet?", "William Shakespeare", [], "  ")
        skipped = await judge.judge("  ", "William Shakespeare", [], "x")
        await judge.close()
        return judge, first, again, em, empty, skipped

    with ScriptedLLMServer(script=[{"content": "Same person.\nTrue"}]) as server:
        judge, first, again, em, empty, skipped = run(scenario(server.url))
        assert len(server.requests) == 1
        body = server.requests[0]
    assert (first.verdict, first.source, first.raw) == (1, "api", "Same person.\nTrue")
    assert (again.verdict, again.source) == (1, "cache")
    assert (em.verdict, em.source, empty.verdict, empty.source) == (1, "em", 0, "empty")
    assert (skipped.verdict, skipped.source) == (None, "skipped")
    assert body["model"] == "gpt-5.4-mini"
    assert (body["temperature"], body["max_completion_tokens"], body["seed"]) == (0, 256, 31415)
    assert body["messages"] == [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": judge_prompt(
                "Who wrote Hamlet?", "William Shakespeare", ["Shakespeare"], "the playwright Will S."
            ),
        },
    ]
    (cached,) = tmp_path.iterdir()
    assert cached.name.startswith(f"gpt-5-4-mini-repository-{PROMPT_VERSION}-")
    assert cached.read_text() == "Same person.\nTrue"
    paper = LLMJudge(base_url="http://127.0.0.1:9", cache_dir=tmp_path, variant="paper")
    assert paper.cache_path("q", "g", [], "p") != judge.cache_path(
        "q", "g", [], "p"
    )  # the key holds the prompt


def test_unparseable_is_cached_api_errors_are_not(tmp_path):
    async def verdict(url, prediction):
        judge = LLMJudge(base_url=url, cache_dir=tmp_path, max_attempts=2)
        result = await judge.judge("Q?", "gold", [], prediction)
        await judge.close()
        return result

    with ScriptedLLMServer(script=[{"content": "Hmm, hard to say."}]) as server:
        result = run(verdict(server.url, "some prediction"))
    assert (result.verdict, result.raw) == (None, "Hmm, hard to say.")
    assert len(list(tmp_path.iterdir())) == 1

    with ScriptedLLMServer(faults=Faults(error_rate=1.0)) as server:
        result = run(
            verdict(server.url.replace("/v1", ""), "another prediction")
        )  # /v1 is appended when missing
        assert server.llm.stats["requests"] == 2  # retried once, then given up
    assert (result.verdict, result.source) == (None, "api")
    assert len(list(tmp_path.iterdir())) == 1  # the first raw output only

    with pytest.raises(ValueError, match="variant"):
        LLMJudge(variant="book")
