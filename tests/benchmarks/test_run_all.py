"""``benchmarks/run_all.sh``: one JSON file with the machine, the load and each ratio next to its goal."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.benchmarks.conftest import BENCHMARKS, bench_module

run_all = bench_module("run_all")


def _run(tmp_path, *args):
    out = tmp_path / "figures.json"
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        [str(BENCHMARKS / "run_all.sh"), "--out", str(out), *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    return done, json.loads(out.read_text()) if out.exists() else None


def test_one_cheap_benchmark_gives_the_report(tmp_path):
    done, report = _run(tmp_path, "--quick", "--only", "corpus_tokens", "--only", "gpu_llm")
    assert done.returncode == 0, done.stderr
    assert set(report) >= {"date", "machine", "loadavg_before", "loadavg_after", "steps", "ratios", "goals"}
    assert len(report["loadavg_before"]) == 3 and report["machine"]["cpus_usable"] >= 1
    assert report["machine"]["cpu"] and isinstance(report["machine"]["cpu_bf16"], bool)  # the CPU's kind
    ran, skipped = report["steps"]
    assert (ran["name"], ran["rc"], skipped["name"]) == ("corpus_tokens", 0, "gpu_llm")
    assert "--repeat 1" in ran["command"] and "GPU" in skipped["skipped"]
    assert report["goals"] == [{"step": "corpus_tokens", "goals": {"counts_identical": True}, "passed": True}]
    assert report["passed"] is True


def test_dry_run_and_unknown_step(tmp_path):
    done, report = _run(tmp_path, "--dry-run")
    assert done.returncode == 0, done.stderr
    names = [step["name"] for step in report["steps"]]
    assert {"serve_http_questions", "serve_http_keywords", "serve_floor", "scale_index", "llm_serve"} <= set(
        names
    )
    assert all(step.get("skipped") for step in report["steps"]) and report["ratios"] == []
    done, report = _run(tmp_path / "nope", "--only", "nope")
    assert done.returncode == 2 and "unknown step(s) nope" in done.stderr and report is None


def test_ratios_carry_their_goals():
    step = run_all.Step("serve_http_questions", [], script="serve_http")
    records = [
        {
            "benchmark": "serve_http",
            "method": "open_url",
            "clients": 16,
            "ratio": 0.85,
            "queries": "questions",
        },
        {"benchmark": "serve_http", "method": "rrf", "clients": 16, "ratio": 0.85},
        {"benchmark": "serve_http", "method": "rrf", "clients": 64, "ratio": 0.5},
        {"benchmark": "corpus_throughput", "ratio": 1.2, "goal": 1.0},
    ]
    ratios, _ = run_all.collect(step, records)
    assert [(r["goal"], r["passed"]) for r in ratios] == [
        (0.9, False),
        (0.8, True),
        (None, None),
        (1.0, True),
    ]
