"""The tool registry: the built-ins are registered like any tool; a registration is checked, seen by every
``WikiTools`` made after it, never by the model's default list, and can be undone."""

import json
from dataclasses import dataclass

import pytest

from sws.env import (
    TOOL_NAMES,
    Tool,
    WikiTools,
    function_schema,
    get_tool,
    register_tool,
    registered_tools,
    tool_schemas,
    unregister_tool,
)


@dataclass(frozen=True)
class CountArgs:
    text: str

    @classmethod
    def parse(cls, raw, options):
        return cls(str(raw.get("text") or ""))


def count_schema(options):
    return function_schema("count", "Count characters.", {"text": {"type": "string"}}, ["text"])


COUNT = Tool("count", count_schema, CountArgs, lambda backend, args: str(len(args.text)))


@pytest.fixture
def count():
    register_tool(COUNT)
    try:
        yield COUNT
    finally:
        unregister_tool("count")


def test_the_builtins_are_registered_tools():
    assert list(registered_tools()) == list(TOOL_NAMES) == ["search", "open_url", "submit_answer"]
    assert [get_tool(name).schema(WikiTools(None).options) for name in TOOL_NAMES] == tool_schemas()
    assert [name for name in TOOL_NAMES if get_tool(name).ends_episode] == ["submit_answer"]


def test_a_registered_tool_is_answered_but_not_offered_by_default(backend, count):
    before = registered_tools()
    tools = WikiTools(backend)
    assert tools.call_tool("count", json.dumps({"text": "abc"})) == "3"
    assert tools.registered_schemas == [*tool_schemas(), count_schema(tools.options)]
    assert tools.schemas == tool_schemas()  # the model's default list: the contract's three
    unregister_tool("count")
    try:
        assert tools.call_tool("count", "{}") == "0"  # made before: it keeps the tools it was made with
        assert json.loads(WikiTools(backend).call_tool("count", "{}"))["error"] == "Unknown tool: count"
    finally:
        register_tool(COUNT)
    assert registered_tools() == before


def test_a_registration_is_checked(count):
    with pytest.raises(ValueError, match="a tool named 'count' is already registered"):
        register_tool(COUNT)
    with pytest.raises(ValueError, match="tool 'tally': its schema names 'count'"):
        register_tool(Tool("tally", count_schema, CountArgs, COUNT.run))
    assert list(registered_tools()) == [*TOOL_NAMES, "count"]
