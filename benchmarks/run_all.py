"""Every benchmark in one run, one JSON file with the figures of record (issue 15 item 5).

Runs each benchmark of :data:`STEPS` (``--quick``: its quick mode) one after another, collects its JSON lines
and writes ``benchmarks/results/run_all-<UTC time>.json``: the machine, the date, the load average before and
after, each step's command, exit code and seconds, and ``ratios``: each ratio measured (a step measures
both sides of a ratio in the same run) with its goal and whether it passes (``null`` where it has no goal),
plus each step's own ``goals``. GPU benchmarks are listed as skipped with the reason. ``--only NAME`` runs
those steps; ``--dry-run`` writes the plan without running anything. Exits 1 when a step fails or a goal
is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
SERVED_GOALS = {"open_url": 0.9}  # served / in-process QPS at 16 clients; every other method 0.8


@dataclass(frozen=True)
class Step:
    name: str
    args: list[str]  # after ``python benchmarks/<script>.py``
    quick: list[str] = field(default_factory=list)  # replaces ``args`` with --quick
    script: str = ""  # default: the name
    skip: str = ""  # why it never runs here


QUESTIONS_KEYWORDS = [("questions", "--queries=questions"), ("keywords", "--queries=keywords")]
_SERVE_HTTP = ["--clients", "1,16,64,256"]
_SERVE_HTTP_QUICK = ["--clients", "16", "--seconds", "5", "--repeats", "2"]
STEPS = [
    Step("corpus_quality", []),
    Step("corpus_tokens", [], ["--repeat", "1"]),
    Step("corpus_throughput", [], ["--quick"]),
    Step("index_build", [], ["--chunks", "20000", "--leads", "2000"]),
    Step("index_embed", [], ["--chunks", "1000", "--leads", "1000"]),
    Step("embed_runtimes", [], ["--quick"]),
    *(
        Step(
            f"search_latency_{q}",
            [f"--query-set={q}"],
            ["--chunks", "20000", "--leads", "2000", "--queries", "400", f"--query-set={q}"],
            "search_latency",
        )
        for q, _ in QUESTIONS_KEYWORDS
    ),
    Step("search_hnsw_recall", [], ["--chunks", "20000", "--leads", "2000", "--queries", "200"]),
    *(
        Step(f"serve_http_{q}", [*_SERVE_HTTP, flag], [*_SERVE_HTTP_QUICK, flag], "serve_http")
        for q, flag in QUESTIONS_KEYWORDS
    ),
    *(
        Step(f"serve_batching_{q}", [flag], ["--clients", "16", "--seconds", "5", flag], "serve_batching")
        for q, flag in QUESTIONS_KEYWORDS
    ),
    Step("serve_floor", [], ["--seconds", "5", "--repeats", "1"]),
    Step("serve_load", [], ["--seconds", "10", "--clients", "64"]),
    Step("serve_retrieve", [], ["--clients", "256", "--seconds", "10", "--rollout-rounds", "1"]),
    Step("serve_autoscale", [], ["--quick"]),
    Step("serve_vs_reference", [], ["--quick"]),
    Step("scale_index", [], ["--quick"]),
    Step("eval_harness", ["overhead"], ["overhead", "--quick"]),
    Step("llm_serve", [], ["--quick"]),
    Step("embed_qwen3_gpu", [], skip="needs a GPU (run benchmarks/gpu_check.sh on a GPU machine)"),
    Step("gpu_llm", [], skip="needs a GPU (run benchmarks/gpu_check.sh on a GPU machine)"),
]


def ratio_goal(record: dict[str, Any]) -> float | None:
    """The goal of a record's ``ratio`` (its own ``goal`` field, or the served/in-process goal)."""
    if isinstance(record.get("goal"), (int, float)):
        return float(record["goal"])
    if record.get("benchmark") == "serve_http" and record.get("clients") == 16:
        return SERVED_GOALS.get(record.get("method"), 0.8)
    return None


def collect(step: Step, records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The step's ratios (each with its goal and pass/fail) and its own goal summaries."""
    ratios, goals = [], []
    keys = ("method", "queries", "query_set", "clients", "input", "measurement")
    for record in records:
        if isinstance(record.get("ratio"), (int, float)):
            goal = ratio_goal(record)
            ratios.append(
                {
                    "step": step.name,
                    **{key: record[key] for key in keys if key in record},
                    "ratio": record["ratio"],
                    "goal": goal,
                    "passed": None if goal is None else record["ratio"] >= goal,
                    "loadavg": record.get("loadavg"),
                }
            )
        if "goals" in record:
            goals.append({"step": step.name, "goals": record["goals"], "passed": record.get("passed")})
    return ratios, goals


def run_step(step: Step, quick: bool, timeout_s: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    argv = [sys.executable, str(REPO / "benchmarks" / f"{step.script or step.name}.py")]
    argv += step.quick if quick else step.args
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout_s, cwd=REPO)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, exc.stdout or "", f"timed out after {timeout_s:g} s"
        out = out.decode() if isinstance(out, bytes) else out
    records = []
    for line in out.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    info = {
        "name": step.name,
        "command": " ".join(argv[1:]),
        "rc": rc,
        "seconds": round(time.perf_counter() - started, 1),
        "records": len(records),
    }
    if rc:
        info["stderr_tail"] = (err or "")[-2000:]
    return info, records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="each benchmark's quick mode")
    parser.add_argument("--only", action="append", default=[], help="run only this step (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="write the plan, run nothing")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per step")
    parser.add_argument(
        "--out", type=Path, help="the JSON file (default: benchmarks/results/run_all-TIME.json)"
    )
    args = parser.parse_args()
    names = {step.name for step in STEPS}
    if unknown := sorted(set(args.only) - names):
        parser.error(f"unknown step(s) {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from corpus_common import MACHINE

    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report: dict[str, Any] = {
        "date": date,
        "machine": MACHINE,
        "quick": args.quick,
        "dry_run": args.dry_run,
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
        "steps": [],
        "ratios": [],
        "goals": [],
    }
    for step in STEPS:
        if args.only and step.name not in args.only:
            continue
        if step.skip or args.dry_run:
            report["steps"].append({"name": step.name, "skipped": step.skip or "dry run"})
            continue
        print(f"run_all: {step.name} ...", file=sys.stderr, flush=True)
        info, records = run_step(step, args.quick, args.timeout)
        ratios, goals = collect(step, records)
        report["steps"].append(info)
        report["ratios"] += ratios
        report["goals"] += goals
    report["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    failed = [s["name"] for s in report["steps"] if s.get("rc")]
    missed = [r for r in report["ratios"] if r["passed"] is False]
    missed += [g for g in report["goals"] if g["passed"] is False]
    report["passed"] = not failed and not missed
    out = args.out or RESULTS / f"run_all-{date.replace(':', '')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(
        f"run_all: wrote {out} (failed steps: {failed or 'none'}, missed goals: {len(missed)})",
        file=sys.stderr,
    )
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
