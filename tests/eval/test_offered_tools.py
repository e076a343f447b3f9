"""``sws eval`` offers the tools the run names (``eval.tools``), a fourth one included once its module is
imported where the tools run (``tools.modules``: the driver and each Ray worker), in process over a real index,
and through ``sws serve`` (``serve.tool_modules``: its driver and each replica) over HTTP."""

import sys

import httpx
import pytest
from click.testing import CliRunner

from sws.agent.scripted_server import ScriptedLLMServer
from sws.cli import cli
from sws.env import TOOL_NAMES, tool_schemas, unregister_tool
from sws.eval import load_records
from tests.startup import RegisteredServe

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


def test_a_fourth_tool_is_answered_by_sws_serve(shout_module, leads_root, tmp_path):
    """The module is named to the service and to the run; the episode's tool call goes over ``POST /call``."""
    script = [
        {"tool_calls": [["shout", {"text": "over http"}], ["search", {"query": "Ada Lovelace"}]]},
        {"tool_calls": [["submit_answer", {"answer": "OVER HTTP"}]]},
    ]
    args = [f"serve.tool_modules=[{MODULE}]"]
    with RegisteredServe(leads_root / "index", args=args, log_path=tmp_path / "serve.log") as served:
        listed = httpx.get(f"{served.url}/tools").json()["tools"]
        with ScriptedLLMServer(script=script) as llm:
            result = run(
                leads_root,
                tmp_path / "run",
                llm.url,
                f"eval.tools=[{','.join(TOOL_NAMES)},shout]",
                f"tools.modules=[{MODULE}]",
                "tools.transport=http",
                f"tools.url={served.url}",
            )
    assert result.exit_code == 0, result.output
    assert [t["function"]["name"] for t in listed] == [*TOOL_NAMES, "shout"]
    (record,) = load_records(tmp_path / "run")
    assert [m["content"] for m in record.messages if m.get("name") == "shout"] == ["OVER HTTP"]
    assert record.search_calls == 1 and record.unknown_tool_calls == 0


def test_sws_serve_refuses_a_tool_module_that_does_not_import(leads_root, tmp_path):
    log = tmp_path / "serve.log"
    args = ["serve.tool_modules=[tests.eval.no_such_tool]"]
    served = RegisteredServe(leads_root / "index", args=args, log_path=log)
    with pytest.raises(RuntimeError, match="exited before it was ready"):
        served.start()
    assert served.process.returncode == 1
    assert "Error: cannot import tool module 'tests.eval.no_such_tool': No module named" in log.read_text()


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
