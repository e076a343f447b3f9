"""The command-line flags, declared once (``sws.config.flags``): every key they set is a config key, a flag
wins over the profile and the overrides, and a ``ray_jobs/`` entrypoint runs its command, options and all."""

from __future__ import annotations

import importlib
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
JOBS = {"evaluate": ("eval",), "build_corpus": ("build", "corpus"), "embed": ("build", "embed")}
JOBS["build_index"] = ("build", "index")


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
        "qa_root": None,
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


def command_of(names: tuple[str, ...]):
    from sws.cli import cli

    group = cli
    for name in names:
        group = group.commands[name]
    return group


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_each_command_has_its_tables_options(command):
    options = [p.opts[0] for p in command_of(command).params if p.opts[0].startswith("--")]
    assert options == [f.name for f in COMMANDS[command]] + ["--config"]


@pytest.mark.parametrize("job", JOBS)
def test_each_job_is_its_command(job):
    """The same option objects, so each flag, check and message exists once."""
    command = command_of(JOBS[job])
    assert importlib.import_module(f"ray_jobs.{job}").command is command
    done = subprocess.run(
        [sys.executable, f"ray_jobs/{job}.py", "-h"], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith(f"Usage: {job}.py [OPTIONS] [KEY=VALUE]...")
    for flag in COMMANDS[JOBS[job]]:
        assert (flag.name in done.stdout) is not flag.hidden, flag.name
