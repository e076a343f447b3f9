"""The command-line flags, declared once (``sws.config.flags``): every key they set is a config key, a flag
wins over the profile and the overrides, and a command and its ``ray_jobs/`` entrypoint read the same table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sws.config import flags, load_config, to_dict
from sws.config.flags import flag_settings

REPO = Path(__file__).resolve().parents[2]
COMMANDS = {
    ("eval",): flags.EVAL,
    ("serve",): flags.SERVE,
    ("build", "corpus"): flags.BUILD_CORPUS,
    ("build", "embed"): flags.EMBED,
    ("build", "index"): flags.BUILD_INDEX,
}
JOBS = {
    "evaluate": flags.EVAL,
    "build_corpus": flags.BUILD_CORPUS,
    "embed": flags.EMBED,
    "build_index": flags.BUILD_INDEX,
}


@pytest.mark.parametrize("table", COMMANDS.values(), ids=[" ".join(c) for c in COMMANDS])
def test_every_key_a_flag_sets_is_a_config_key(table):
    resolved = to_dict(load_config())
    for flag in table:
        for key in (*flag.keys, *(k for k, _ in flag.sets)):
            node = resolved
            for part in key.split("."):
                assert isinstance(node, dict) and part in node, f"{flag.name}: no config key {key}"
                node = node[part]


def test_a_flag_given_wins_and_one_not_given_leaves_the_config():
    values = {
        "port": 8080,
        "replicas": 2,
        "no_batching": True,
        "no_mcp": False,
        "host": None,
        "llm_source": "x",
    }
    keys, stage = flag_settings(flags.SERVE, values)
    assert keys == {
        "serve.port": 8080,
        "serve.replicas.min_replicas": 2,
        "serve.replicas.max_replicas": 2,
        "serve.embedding.batching": False,
    }
    assert stage == {"llm_source": "x"}
    cfg = load_config(
        "local", ["serve.port=9000", "serve.replicas.max_replicas=4", "serve.host=0.0.0.0"], keys
    )
    assert (cfg.serve.port, cfg.serve.replicas.min_replicas, cfg.serve.replicas.max_replicas) == (8080, 2, 2)
    assert (cfg.serve.host, cfg.serve.mcp, cfg.serve.embedding.batching) == ("0.0.0.0", True, False)

    keys, stage = flag_settings(flags.EVAL, {"tools_url": "http://h:1", "dataset": "d", "limit": 3})
    assert keys == {"tools.url": "http://h:1", "tools.transport": "http"}
    assert stage == {
        "dataset": "d",
        "data_path": None,
        "out": None,
        "limit": 3,
        "repair": None,
        "extend": None,
        "unverified_tools": None,
    }


def test_flag_values_are_literal():
    """Not parsed as YAML or OmegaConf as a ``key=value`` override is: a model named ``${x}`` stays so."""
    for model in ("Qwen/Qwen3.5-9B", "${x}", "a\\${b}", "null", "7", "[x]"):
        assert load_config("local", [], {"eval.model": model}).eval.model == model


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_each_command_has_its_tables_options(command):
    from sws.cli import cli

    group = cli
    for name in command:
        group = group.commands[name]
    options = [p.opts[0] for p in group.params if p.opts[0].startswith("--")]
    assert options == [f.name for f in COMMANDS[command]] + ["--config"]


@pytest.mark.parametrize("job", JOBS)
def test_each_job_has_its_tables_options(job):
    done = subprocess.run(
        [sys.executable, f"ray_jobs/{job}.py", "--help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    for flag in JOBS[job]:
        assert (flag.name in done.stdout) is not flag.hidden, flag.name
