"""The retry policy: what the caller classifies as transient is retried, the last error propagates; its
reading of ``Retry-After`` (seconds or an HTTP date, from either error kind), and a longer pause than the
backoff cap ends the retries instead of being cut short."""

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import openai
import pytest

from sws.env import TransientToolError
from sws.retry import RetryPolicy, parse_retry_after, retry_after_s


def test_parse_retry_after():
    assert parse_retry_after("7") == 7.0 and parse_retry_after("1.5") == 1.5
    assert parse_retry_after("-3") == 0.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    assert 100 < parse_retry_after(later) <= 120
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None


def test_retry_after_of_tool_and_llm_errors():
    assert retry_after_s(TransientToolError("busy", retry_after_s=2.0)) == 2.0
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    response = httpx2.Response(429, headers={"retry-after": "7"}, request=request)
    assert retry_after_s(openai.RateLimitError("slow down", response=response, body=None)) == 7.0
    assert retry_after_s(ValueError("x")) is None


def test_a_retry_after_is_waited_in_full_or_refused():
    policy = RetryPolicy(backoff_s=0.5, backoff_max_s=8.0)
    assert policy.delay(1, retry_after_s=7.0) == 7.0
    assert policy.refusal(TransientToolError("busy", retry_after_s=7.0)) is None
    assert policy.refusal(TransientToolError("busy", retry_after_s=60.0)) == (
        "asked to retry after 60 s, more than the backoff cap of 8 s"
    )


def test_the_caller_says_what_is_retried():
    policy = RetryPolicy(max_attempts=3, backoff_s=0, backoff_max_s=0)
    calls, waits = [], []

    def down():
        calls.append(1)
        raise ConnectionError("down")

    with pytest.raises(ConnectionError, match="down"):
        policy.run(down, lambda e: isinstance(e, ConnectionError), on_retry=lambda *w: waits.append(w))
    assert len(calls) == 3 and [(str(e), n, s) for e, n, s in waits] == [("down", 1, 0.0), ("down", 2, 0.0)]
    with pytest.raises(KeyError):  # not transient: at once
        policy.run(
            lambda: {}["x"], lambda e: isinstance(e, ConnectionError), on_retry=lambda *w: waits.append(w)
        )
    assert len(waits) == 2

    flaky = [ConnectionError("once")]

    async def answer():
        if flaky:
            raise flaky.pop()
        return "done"

    assert asyncio.run(policy.arun(lambda: answer(), lambda e: isinstance(e, ConnectionError))) == "done"
