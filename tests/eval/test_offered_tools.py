"""``sws eval`` offers the tools the run names (``eval.tools``), a fourth one included once its module is
imported where the tools run (``tools.modules``: the driver and each Ray worker), in process over a real index."""

import sys

import pytest
from click.testing import CliRunner

from sws.agent.scripted_server import ScriptedLLMServer
from sws.cli import cli
from sws.env import TOOL_NAMES, tool_schemas, unregister_tool
from sws.eval import load_records

pytestmark = pytest.mark.usefixtures("ray_local")
BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"
MODULE = "tests.eval.shout_tool"


@pytest.fixture
def shout_module():
    """The module's registration in this process is undone after the test (a later import registers again)."""
    yield MODULE
    if MODULE in sys.modules:
        unregister_tool("shout")
        del sys.modules[MODULE]


def run(leads_root, out, url, *overrides):
    args = ["eval", "--dataset", "bamboogle", "--data", BAMBOOGLE, "--limit", "1", "--llm-base-url", url]
    args += ["--model", "shouter", "--index", str(leads_root / "index"), "--out", str(out), "eval.workers=1"]
    return CliRunner().invoke(cli, [*args, *overrides])


def test_a_fourth_tool_is_offered_and_answered(shout_module, leads_root, tmp_path):
    script = [
        {"tool_calls": [["shout", {"text": "ping"}]]},
        {"tool_calls": [["submit_answer", {"answer": "PING"}]]},
    ]
    offered = f"eval.tools=[{','.join(TOOL_NAMES)},shout]"
    with ScriptedLLMServer(script=script) as llm:
        result = run(leads_root, tmp_path / "run", llm.url, offered, f"tools.modules=[{shout_module}]")
        sent = llm.requests[0]["tools"]
    assert result.exit_code == 0, result.output
    assert [s["function"]["name"] for s in sent] == [*TOOL_NAMES, "shout"]
    assert sent[:3] == tool_schemas()
    (record,) = load_records(tmp_path / "run")
    assert record.tools == sent and record.unknown_tool_calls == 0
    assert [m["content"] for m in record.messages if m.get("name") == "shout"] == ["PING"]


def test_an_unknown_tool_or_module_is_refused_before_the_run(shout_module, leads_root, tmp_path):
    with ScriptedLLMServer() as llm:
        unknown = run(leads_root, tmp_path / "a", llm.url, "eval.tools=[search,shout]")
        missing = run(leads_root, tmp_path / "b", llm.url, "tools.modules=[tests.eval.no_such_tool]")
    assert (
        unknown.exit_code == 1 and "unknown tool(s) ['shout'] (registered: search, open_url" in unknown.output
    )
    assert missing.exit_code == 1
    assert "Error: cannot import tool module 'tests.eval.no_such_tool': No module named" in missing.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
