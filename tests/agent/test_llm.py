"""The LLM endpoint under faults: retries with backoff, timeouts, the concurrency limit, recorded failures."""

import pytest

from sws.agent import LLMEndpoint
from sws.agent.llm import resolve_base_url
from sws.agent.scripted_server import Faults, ScriptedLLMServer

FAST = {"backoff_s": 0.01, "backoff_max_s": 0.05}


def test_base_url_and_arguments():
    assert resolve_base_url("http://h:1") == resolve_base_url("http://h:1/v1/") == "http://h:1/v1"
    with pytest.raises(ValueError):
        LLMEndpoint("http://h:1", max_concurrency=0)


def test_server_errors_retried_then_recorded(run_episode):
    with ScriptedLLMServer(faults=Faults(error_rate=1.0)) as server:
        ep = run_episode(server.url, "m", "Q", endpoint={"max_attempts": 3, **FAST})
        assert server.llm.stats["requests"] == 3
    assert (ep.status, ep.error_type, ep.rounds, ep.stop_reason) == ("error", "InternalServerError", 0, None)
    assert ep.messages[-1] == {"role": "user", "content": "Q"}


def test_timeouts_retried_then_recorded(run_episode):
    with ScriptedLLMServer(faults=Faults(timeout_rate=1.0, hang_s=3)) as server:
        ep = run_episode(server.url, "m", "Q", endpoint={"max_attempts": 2, "timeout": 0.2, **FAST})
        assert server.llm.stats["hangs"] == 2
    assert (ep.status, ep.error_type) == ("error", "LLMTimeoutError")
    assert ep.error == f"no complete answer from {server.url} within 0.2 s"


def test_client_errors_are_not_retried(server, run_episode):
    ep = run_episode(server.url.replace("/v1", "/nowhere/v1"), "m", "Q", endpoint={"max_attempts": 5, **FAST})
    assert (ep.status, ep.error_type) == ("error", "NotFoundError")
    assert server.llm.stats["requests"] == 0


def test_every_episode_ends_recorded_under_faults(run_episodes):
    faults = Faults(error_rate=0.2, timeout_rate=0.05, rate_limit_rate=0.05, hang_s=2, seed=11)
    with ScriptedLLMServer(faults=faults, record_requests=False) as server:
        episodes = run_episodes(
            server.url,
            "search_then_submit",
            [f"Q{i}" for i in range(40)],
            endpoint={"max_attempts": 4, "timeout": 0.3, **FAST},
        )
        stats = dict(server.llm.stats)
    assert len(episodes) == 40
    assert all(ep.status in ("submitted", "error") for ep in episodes)
    assert all(ep.error_type and ep.error is not None for ep in episodes if ep.status == "error")
    assert sum(ep.status == "submitted" for ep in episodes) >= 30
    assert sum(ep.llm_retries for ep in episodes) > 0
    assert stats["errors"] > 0 and stats["hangs"] > 0 and stats["rate_limited"] > 0
    assert [ep.seed for ep in episodes] == [42 + i for i in range(40)]


def test_concurrency_limit_per_endpoint(run_episodes):
    with ScriptedLLMServer(faults=Faults(latency_s=0.05), record_requests=False) as server:
        episodes = run_episodes(
            server.url, "search_then_submit", [f"Q{i}" for i in range(12)], endpoint={"max_concurrency": 3}
        )
        assert server.llm.stats["max_in_flight"] == 3
    assert all(ep.status == "submitted" for ep in episodes)


@pytest.mark.timeout(60)  # a hang guard only: before the total deadline this answer took minutes
def test_an_answer_that_trickles_is_cut_at_the_deadline(run_episode):
    with ScriptedLLMServer(faults=Faults(drip_s=0.2)) as server:  # headers at once, then 5 bytes a second
        ep = run_episode(server.url, "m", "Q", endpoint={"max_attempts": 2, "timeout": 0.5, **FAST})
        assert server.llm.stats["requests"] == 2  # the late attempt failed and was retried
    assert (ep.status, ep.error_type, ep.rounds) == ("error", "LLMTimeoutError", 0)
    assert ep.error == f"no complete answer from {server.url} within 0.5 s"


def test_retry_after_is_honoured(run_episode):
    with ScriptedLLMServer(faults=Faults(rate_limit_rate=1.0, retry_after_s=1)) as server:
        ep = run_episode(
            server.url, "m", "Q", endpoint={"max_attempts": 3, "backoff_s": 0.01, "backoff_max_s": 5}
        )
        stats = dict(server.llm.stats)
    assert (stats["requests"], stats["early"]) == (3, 0)  # no retry came before the server's Retry-After
    assert (ep.status, ep.error_type) == ("error", "RateLimitError")


def test_retry_after_beyond_the_backoff_cap_is_not_retried_sooner(run_episode):
    with ScriptedLLMServer(faults=Faults(rate_limit_rate=1.0, retry_after_s=60)) as server:
        ep = run_episode(server.url, "m", "Q", endpoint={"max_attempts": 3, **FAST})
        assert server.llm.stats["requests"] == 1
    assert (ep.status, ep.error_type) == ("error", "LLMEndpointError")
    assert ep.error.startswith("the LLM endpoint answered HTTP 429 and asked to retry after 60 s, more than")


@pytest.mark.parametrize(
    "malformed, what",
    [
        ("html", "text/html"),
        ("sse", "text/event-stream"),
        ("no_choices", "JSON without choices[0].message"),
        ("bad_json", "malformed JSON"),
    ],
)
def test_an_answer_that_is_no_chat_completion_is_recorded_as_such(malformed, what, run_episode):
    with ScriptedLLMServer(faults=Faults(malformed=malformed)) as server:
        ep = run_episode(server.url, "m", "Q", endpoint={"max_attempts": 3, **FAST})
        assert server.llm.stats["requests"] == 1  # a misconfigured endpoint: not retried
    assert (ep.status, ep.error_type, ep.rounds) == ("error", "LLMEndpointError", 0)
    assert ep.error.startswith(f"the LLM endpoint answered {what}, not a chat completion: ")
