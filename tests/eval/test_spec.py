"""An evaluation run as one typed value (``sws.eval.EvalSpec``), checked when made, before any worker starts:
its endpoint, judge, limits and the tools' options."""

import dataclasses

import pytest

from sws.agent import AgentConfig, LLMSettings
from sws.config import ToolClientConfig
from sws.config import ToolOptions as ToolOptionsConfig
from sws.env import ToolOptions
from sws.eval import EvalSpec, JudgeSettings, QAItem
from sws.stages import tool_client_args

ITEMS = [QAItem("q1", "Who?", "Her", (), "default", "Bamboogle")]


def spec(**changes):
    base = EvalSpec(ITEMS, "runs/x", AgentConfig(model="m"), LLMSettings("http://h:1/v1"), dict, "env-1")
    return dataclasses.replace(base, **changes)


def test_a_spec_records_its_identity():
    made = spec(
        judge=JudgeSettings(model="j", variant="paper"),
        dataset="Bamboogle",
        data_sha256="ab",
        data_path="qa/b.json",
        data_source="reference",
    )
    assert str(made.out_dir) == "runs/x"
    assert made.identity == {
        "dataset": "Bamboogle",
        "data_path": "qa/b.json",
        "data_sha256": "ab",
        "data_source": "reference",
        "subset": "full_test",
        "sampling_seed": None,
        "model": "m",
        "agent_config": AgentConfig(model="m").to_dict(),
        "fingerprint": "env-1",
        "query_embedding": None,
        "llm_base_url": "http://h:1/v1",
        "judge": {"model": "j", "variant": "paper"},
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"agent": AgentConfig()}, "agent.model is needed"),
        ({"workers": 0}, "workers=0: must be >= 1"),
        ({"episodes_per_worker": 0}, "episodes_per_worker=0: must be >= 1"),
        ({"rows_per_part": 0}, "rows_per_part=0"),
        ({"max_passes": 0}, "max_passes=0"),
        ({"worker_num_cpus": -1}, "worker_num_cpus=-1: must be >= 0"),
    ],
)
def test_a_spec_out_of_range_is_refused_when_made(changes, message):
    with pytest.raises(ValueError, match=message):
        spec(**changes)


def test_endpoint_and_judge_settings_are_checked_when_made():
    with pytest.raises(ValueError, match="max_concurrency and max_attempts must be >= 1, got 0, 6"):
        LLMSettings("http://h:1", max_concurrency=0)
    with pytest.raises(ValueError, match="judge variant must be 'repository' or 'paper', got 'book'"):
        JudgeSettings(variant="book")
    with pytest.raises(ValueError, match="max_concurrency and max_attempts must be >= 1, got 16, 0"):
        JudgeSettings(max_attempts=0)
    assert LLMSettings("http://h:1", max_concurrency=3).endpoint().base_url == "http://h:1/v1"


def test_the_tools_options_are_checked_in_the_driver():
    cfg = ToolClientConfig(tools=ToolOptionsConfig(link_mode="uri"))
    with pytest.raises(ValueError, match="link_mode='uri'"):
        tool_client_args(cfg, index="idx")
    assert tool_client_args(ToolClientConfig(), index="idx")["tool_options"] == ToolOptions()


def test_the_configs_tool_options_are_the_tools():
    """The ``tools`` section is the library's ``ToolOptions`` as a structured config (no config object enters
    the library): the same fields and defaults."""
    assert dataclasses.asdict(ToolOptionsConfig()) == dataclasses.asdict(ToolOptions())
